"""Error bounds of the vectorized exp / log / rsqrt against float64 references over wide
ranges, and their special values (stated in `vector_math`'s docstring)."""

from __future__ import annotations

import torch
from _kernel_util import tile_kernel

from plang.dtypes import FP32
from plang.ir.ops import make_call

N = 4096


def _run(op: str, x: torch.Tensor) -> torch.Tensor:
    k = tile_kernel(op, [FP32], FP32, (1, x.numel()), (1, x.numel()), (0, 0),
                    lambda b, t: make_call(f"tile.{op}", [t[0]]))
    out = torch.zeros(1, x.numel())
    k(x.reshape(1, -1), out)
    return out.reshape(-1)


def _max_rel_err(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.double() - want) / want.abs()).abs().max().item()


def test_exp_relative_error_bound() -> None:
    x = torch.linspace(-87.0, 88.0, N)
    assert _max_rel_err(_run("exp", x), torch.exp(x.double())) <= 4e-7


def test_exp_denormal_results() -> None:
    """Below exp(-87.3) results are denormal: within one denormal step (2**-149) of the
    exact value, and 0 where that rounds to 0."""
    x = torch.cat([torch.linspace(-104.0, -87.0, N - 2), torch.tensor([-110.0, -1e30])])
    got = _run("exp", x).double()
    assert (got - torch.exp(x.double())).abs().max().item() <= 2.0 ** -149
    assert got[-1] == 0 and got[-2] == 0


def test_log_relative_error_bound() -> None:
    x = torch.cat([torch.logspace(-37, 38, N // 2), torch.linspace(0.5, 2.0, N // 2)])
    want = torch.log(x.double())
    got = _run("log", x).double()
    err = ((got - want).abs() / want.abs().clamp_min(1e-3)).max().item()
    assert err <= 4e-7


def test_rsqrt_relative_error_bound() -> None:
    x = torch.logspace(-30, 30, N)
    assert _max_rel_err(_run("rsqrt", x), torch.rsqrt(x.double())) <= 2e-7


def test_special_values() -> None:
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([inf, -inf, nan, 0.0, -0.0, 100.0, -100.0, 88.7])
    e = _run("exp", x)
    assert e[0] == inf and e[1] == 0 and e[2].isnan() and e[3] == 1 and e[5] == inf
    assert e[6] == torch.exp(x[6])  # the denormal 3.78e-44, at every ISA level
    assert abs(e[7].item() / torch.exp(x[7].double()).item() - 1) < 1e-6
    lg = _run("log", torch.tensor([0.0, -1.0, inf, nan, 1.0, -inf, 1e-45, 2.0]))
    assert lg[0] == -inf and lg[1].isnan() and lg[2] == inf and lg[3].isnan() and lg[4] == 0
    assert lg[5].isnan() and torch.isfinite(lg[6])
