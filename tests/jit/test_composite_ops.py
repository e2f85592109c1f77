"""An elementwise op defined only by its registry entry (`silu` in `ir/ops/composite.py`),
end to end through `@pl.jit`: parsed as `pl.silu`, type-checked, converted from tensor to
tile form, fused into its consumer, lowered and run, against torch's own implementation
(every composite op's kernel is checked in tests/codegen/test_kernel_composite.py)."""

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref
from plang.ir.ops import REGISTRY

SILU = torch.nn.functional.silu
ROWS, COLS = 64, 256


@pl.jit.incore
def silu_plus_x(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [ROWS, COLS])
    return pl.store(pl.add(pl.silu(t), t), [0, 0], y)


@pl.jit
def tile_level(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    return silu_plus_x(x, y)


@pl.jit
def tensor_level(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.assemble(y, pl.mul(pl.silu(x), 2.0), [0, 0])
    return y


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_tile_level_matches_torch(dtype):
    x = (torch.randn(ROWS, COLS) * 6).to(dtype)
    y = torch.empty_like(x)
    tile_level(x, y)
    want = (SILU(x.float()) + x.float()).to(dtype)
    tol = {torch.float32: 2e-6, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    torch.testing.assert_close(y, want, rtol=tol, atol=tol)


def test_tensor_level_matches_torch_and_fuses():
    x = torch.randn(ROWS, COLS) * 6
    y = torch.empty_like(x)
    tensor_level(x, y)
    torch.testing.assert_close(y, SILU(x) * 2.0, rtol=2e-6, atol=2e-6)
    text = tensor_level.lower(x, y).as_python()
    assert "pl.tile.muls(pl.tile.silu(" in text  # fused into its consumer by FuseTileOps


def test_the_reference_agrees():
    x = torch.randn(ROWS, COLS) * 6
    got = run_torch_ref(tensor_level.specialize(x, torch.empty_like(x)), x, torch.empty_like(x))
    torch.testing.assert_close(got, SILU(x) * 2.0, rtol=2e-6, atol=2e-6)


def test_type_errors_name_the_op():
    assert REGISTRY["tile.silu"].facts.semantics is not None

    @pl.jit.incore
    def int_silu(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        t = pl.load(x, [0, 0], [8, 8])
        return pl.store(pl.silu(t), [0, 0], y)

    @pl.jit
    def run(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        return int_silu(x, y)

    x = torch.ones(8, 8, dtype=torch.int32)
    with pytest.raises(pl.ParserTypeError, match="silu"):
        run(x, torch.empty_like(x))
