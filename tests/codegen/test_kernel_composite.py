"""Every composite op (`ir/ops/composite.py`: an elementwise op given only by its scalar
semantics) compiled and run against torch's own implementation of it, in each float dtype,
and its torch reference (the semantics evaluated by the reference codegen) against torch."""

from __future__ import annotations

import pytest
import torch
from _kernel_util import FLOAT_DTYPES, rand, tile_kernel

from plang.codegen.torch_ref_ops import TABLE
from plang.dtypes import DataType
from plang.ir.ops import make_call
from plang.ir.ops.composite import COMPOSITES

#: composite op -> torch's implementation (a new entry in COMPOSITES needs one here)
TORCH = {
    "silu": torch.nn.functional.silu,
    "softplus": torch.nn.functional.softplus,
}
TOL = {"FP32": 3e-6, "FP16": 2e-3, "BF16": 1.6e-2}


def test_every_composite_has_a_torch_twin():
    assert set(COMPOSITES) == set(TORCH)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", sorted(COMPOSITES))
def test_kernel_matches_torch(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    shape = (7, 45)  # width not a multiple of any vector width
    k = tile_kernel(op, [d], d, shape, shape, (0, 0), lambda b, t: make_call(f"tile.{op}", [t[0]]))
    x = rand(shape, d, -30.0, 30.0)
    out = torch.zeros(shape, dtype=d.to_torch())
    k(x, out)
    want = TORCH[op](x.float()).to(d.to_torch())
    torch.testing.assert_close(out, want, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("op", sorted(COMPOSITES))
def test_reference_emitter_matches_torch(op: str) -> None:
    x = torch.linspace(-30, 30, 601).reshape(1, -1)
    call = make_call(f"tensor.{op}", [_tensor_var(x)])

    class Args:
        dtype = "torch.float32"

        def __getitem__(self, name: str) -> str:
            return "x"

    source = TABLE[call.op.name](Args())
    got = eval(source, {"torch": torch, "x": x})
    torch.testing.assert_close(got, TORCH[op](x), rtol=1e-6, atol=1e-6)


def _tensor_var(x: torch.Tensor):
    from plang.dtypes import FP32
    from plang.ir import TensorType, Var

    return Var("x", TensorType(list(x.shape), FP32))
