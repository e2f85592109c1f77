"""`pl.tanh` / `pl.sigmoid` in `@pl.jit` kernels: GELU(tanh) and SiLU vs torch.nn.functional."""

import math

import torch

import plang as pl

ROWS, COLS, BLOCK = 64, 200, 16  # 200 columns: not a multiple of the vector width
GELU_C = math.sqrt(2.0 / math.pi)


@pl.jit.incore
def gelu_silu_rows(x: pl.Tensor, gelu: pl.Out[pl.Tensor], silu: pl.Out[pl.Tensor]):
    for i in pl.range(ROWS // BLOCK):
        t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
        z = pl.mul(pl.add(t, pl.mul(pl.mul(pl.mul(t, t), t), 0.044715)), GELU_C)
        g = pl.mul(pl.mul(t, 0.5), pl.add(pl.tanh(z), 1.0))
        gelu = pl.store(g, [i * BLOCK, 0], gelu)
        silu = pl.store(pl.mul(t, pl.sigmoid(t)), [i * BLOCK, 0], silu)
    return gelu, silu


@pl.jit
def gelu_silu(x: pl.Tensor, gelu: pl.Out[pl.Tensor], silu: pl.Out[pl.Tensor]):
    gelu, silu = gelu_silu_rows(x, gelu, silu)
    return gelu, silu


def test_gelu_tanh_and_silu_match_torch():
    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS) * 4.0
    gelu, silu = torch.empty(ROWS, COLS), torch.empty(ROWS, COLS)
    gelu_silu(x, gelu, silu)
    torch.testing.assert_close(gelu, torch.nn.functional.gelu(x, approximate="tanh"), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(silu, torch.nn.functional.silu(x), rtol=1e-5, atol=1e-6)
