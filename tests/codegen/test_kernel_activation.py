"""tanh / sigmoid kernels (`vector_math.tanh` / `vector_math.sigmoid`) against torch: FP32 error
bounds over the whole float range (measured: tanh abs <= 8e-8 and rel <= 1.5e-7, sigmoid abs
<= 9e-8 and rel <= 1.9e-7 for normal results), special values, and FP32 / FP16 / BF16 tiles
whose width is not a multiple of any vector width."""

from __future__ import annotations

import pytest
import torch
from _kernel_util import FLOAT_DTYPES, rand, tile_kernel

from plang.dtypes import FP32, DataType
from plang.ir.ops import make_call

OPS = ("tanh", "sigmoid")
_TORCH = {"tanh": torch.tanh, "sigmoid": torch.sigmoid}


def _run(op: str, x: torch.Tensor, dtype: DataType = FP32) -> torch.Tensor:
    shape = tuple(x.shape) if x.dim() == 2 else (1, x.numel())
    k = tile_kernel(op, [dtype], dtype, shape, shape, (0, 0), lambda b, t: make_call(f"tile.{op}", [t[0]]))
    out = torch.zeros(shape, dtype=dtype.to_torch())
    k(x.reshape(shape), out)
    return out.reshape(x.shape)


def _wide_range() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    bits = torch.randint(0, 0x7F800000, (16384,), generator=g, dtype=torch.int32).view(torch.float32)
    return torch.cat([torch.linspace(-20, 20, 40001), torch.linspace(-0.7, 0.7, 20001),
                      torch.logspace(-40, 2, 8192), -torch.logspace(-40, 2, 8192), bits, -bits])


@pytest.mark.parametrize("op,abs_bound,rel_bound", [("tanh", 1e-7, 2e-7), ("sigmoid", 1e-7, 2.5e-7)])
def test_fp32_error_bounds(op: str, abs_bound: float, rel_bound: float) -> None:
    x = _wide_range()
    want = _TORCH[op](x.double())
    err = (_run(op, x).double() - want).abs()
    assert err.max().item() <= abs_bound
    normal = want.abs() >= 2.0 ** -126  # sigmoid's denormal results depend on exp's underflow path
    assert (err[normal] / want[normal].abs()).max().item() <= rel_bound


def test_special_values() -> None:
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([0.0, -0.0, inf, -inf, nan, 1e30, -1e30, 30.0, -30.0, 1e-30, -1e-30])
    t = _run("tanh", x)
    assert t[0].item() == 0 and not t[0].signbit() and t[1].item() == 0 and t[1].signbit()
    assert t[2].item() == 1 and t[3].item() == -1 and t[4].isnan()
    assert t[5:9].tolist() == [1.0, -1.0, 1.0, -1.0]
    assert t[9].item() == pytest.approx(1e-30) and t[10].item() == pytest.approx(-1e-30)
    s = _run("sigmoid", x)
    assert s[0].item() == 0.5 and s[1].item() == 0.5 and s[2].item() == 1 and s[3].item() == 0
    assert s[4].isnan() and s[5].item() == 1 and s[6].item() == 0 and s[7].item() == 1
    assert s[8].item() == pytest.approx(torch.sigmoid(x[8].double()).item(), rel=1e-6)
    assert s[9].item() == 0.5 and s[10].item() == 0.5


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_matches_torch_on_odd_widths(op: str, dtype: str) -> None:
    """6 x 37 and 3 x 5 tiles: the vector loop's remainder lanes are computed too. The result
    is computed in f32 and rounded once: FP16 / BF16 are within one ulp of torch's result."""
    d = DataType.from_name(dtype)
    g = torch.Generator().manual_seed(1)
    tol = {"rtol": 2e-6, "atol": 2e-7} if d is FP32 else {}  # torch's per-dtype defaults: ~1 ulp
    for shape in ((6, 37), (3, 5)):
        x = rand(shape, d, -12.0, 12.0, generator=g)
        want = _TORCH[op](x.float()).to(d.to_torch())
        torch.testing.assert_close(_run(op, x, d), want, **tol)
