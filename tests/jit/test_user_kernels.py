"""Four kernels written the way README / getting-started / language-guide teach, checked against torch.

Kernels live at module level so plang can read their source.
"""

import math

import torch

import plang as pl

# ---------------------------------------------------------------- (1) layernorm over rows

LN_ROWS, LN_COLS, LN_BLOCK = 256, 512, 16
LN_EPS = 1e-5


@pl.jit.incore
def layernorm_rows(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, y: pl.Out[pl.Tensor]):
    g = pl.load(gamma, [0, 0], [1, LN_COLS])
    b = pl.load(beta, [0, 0], [1, LN_COLS])
    for i in pl.range(LN_ROWS // LN_BLOCK):
        t = pl.load(x, [i * LN_BLOCK, 0], [LN_BLOCK, LN_COLS])
        mean = pl.mul(pl.row_sum(t), 1.0 / LN_COLS)
        xc = pl.row_expand_sub(t, mean)
        var = pl.mul(pl.row_sum(pl.mul(xc, xc)), 1.0 / LN_COLS)
        rstd = pl.rsqrt(pl.add(var, LN_EPS))
        out = pl.col_expand_add(pl.col_expand_mul(pl.row_expand_mul(xc, rstd), g), b)
        y = pl.store(out, [i * LN_BLOCK, 0], y)
    return y


@pl.jit
def layernorm(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = layernorm_rows(x, gamma, beta, y)
    return y


def test_layernorm_matches_torch():
    torch.manual_seed(0)
    x = torch.randn(LN_ROWS, LN_COLS) * 3.0 + 1.5
    gamma, beta = torch.randn(1, LN_COLS), torch.randn(1, LN_COLS)
    y = torch.empty(LN_ROWS, LN_COLS)
    layernorm(x, gamma, beta, y)
    expected = torch.nn.functional.layer_norm(x, (LN_COLS,), gamma[0], beta[0], eps=LN_EPS)
    torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- (2) GELU(tanh) MLP block

MLP_M, MLP_D, MLP_H = 64, 128, 256
GELU_C = math.sqrt(2.0 / math.pi)


@pl.jit.incore
def mlp_kernel(x: pl.Tensor, w1: pl.Tensor, b1: pl.Tensor, w2: pl.Tensor, y: pl.Out[pl.Tensor]):
    tx = pl.load(x, [0, 0], [MLP_M, MLP_D])
    tw1 = pl.load(w1, [0, 0], [MLP_D, MLP_H])
    h = pl.matmul(tx, tw1, out_dtype=pl.FP32)
    h = pl.col_expand_add(h, pl.load(b1, [0, 0], [1, MLP_H]))
    # gelu_tanh(h) = 0.5 h (1 + tanh(z)) = h * sigmoid(2z), z = c (h + 0.044715 h^3)
    z = pl.mul(pl.add(h, pl.mul(pl.mul(pl.mul(h, h), h), 0.044715)), GELU_C)
    g = pl.div(h, pl.add(pl.exp(pl.mul(z, -2.0)), 1.0))
    tw2 = pl.load(w2, [0, 0], [MLP_H, MLP_D])
    out = pl.matmul(pl.cast(g, pl.BF16), tw2, out_dtype=pl.FP32)
    y = pl.store(out, [0, 0], y)
    return y


@pl.jit
def mlp(x: pl.Tensor, w1: pl.Tensor, b1: pl.Tensor, w2: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = mlp_kernel(x, w1, b1, w2, y)
    return y


def test_gelu_mlp_matches_torch():
    torch.manual_seed(1)
    x = torch.randn(MLP_M, MLP_D).to(torch.bfloat16)
    w1 = (torch.randn(MLP_D, MLP_H) / math.sqrt(MLP_D)).to(torch.bfloat16)
    b1 = torch.randn(1, MLP_H) * 0.1
    w2 = (torch.randn(MLP_H, MLP_D) / math.sqrt(MLP_H)).to(torch.bfloat16)
    y = torch.empty(MLP_M, MLP_D)
    mlp(x, w1, b1, w2, y)
    h = x.float() @ w1.float() + b1
    g = torch.nn.functional.gelu(h, approximate="tanh").to(torch.bfloat16)
    expected = g.float() @ w2.float()
    # fp32 sums in another order; a bf16 rounding of g may flip by one ulp (|g| 2^-8 * |w2|)
    torch.testing.assert_close(y, expected, rtol=1e-3, atol=5e-3)


# ---------------------------------------------------------------- (3) column sum + max, partial block

CR_ROWS, CR_COLS, CR_BLOCK = 300, 200, 64


@pl.jit.incore
def col_reduce_kernel(x: pl.Tensor, col_sum: pl.Out[pl.Tensor], col_max: pl.Out[pl.Tensor]):
    first = pl.load(x, [0, 0], [CR_BLOCK, CR_COLS])
    acc_sum = pl.col_sum(first)
    acc_max = pl.col_max(first)
    for i in pl.range(1, (CR_ROWS + CR_BLOCK - 1) // CR_BLOCK):
        rows = pl.min(CR_BLOCK, CR_ROWS - i * CR_BLOCK)
        t = pl.load(x, [i * CR_BLOCK, 0], [CR_BLOCK, CR_COLS], valid_shape=[rows, CR_COLS])
        acc_sum = pl.add(acc_sum, pl.col_sum(t))
        acc_max = pl.maximum(acc_max, pl.col_max(t))
    col_sum = pl.store(acc_sum, [0, 0], col_sum)
    col_max = pl.store(acc_max, [0, 0], col_max)
    return col_sum, col_max


@pl.jit
def col_reduce(x: pl.Tensor, col_sum: pl.Out[pl.Tensor], col_max: pl.Out[pl.Tensor]):
    col_sum, col_max = col_reduce_kernel(x, col_sum, col_max)
    return col_sum, col_max


def test_column_sum_and_max_with_partial_block():
    torch.manual_seed(2)
    # negative values: padding rows read as 0 would show up in the max
    x = torch.randn(CR_ROWS, CR_COLS) - 5.0
    s, m = torch.empty(1, CR_COLS), torch.empty(1, CR_COLS)
    col_reduce(x, s, m)
    torch.testing.assert_close(s, x.sum(0, keepdim=True), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(m, x.amax(0, keepdim=True), rtol=0, atol=0)


# ---------------------------------------------------------------- (4) SPMD per-block scale

SP_BLOCKS, SP_ROWS, SP_COLS = 4, 128, 64


@pl.jit.incore
def scale_block(x: pl.Tensor, factors: pl.Tensor, y: pl.Out[pl.Tensor]):
    blk = pl.get_block_idx()
    rows = SP_ROWS // SP_BLOCKS
    f = pl.read(factors, [0, blk])
    t = pl.load(x, [blk * rows, 0], [rows, SP_COLS])
    y = pl.store(pl.mul(t, f), [blk * rows, 0], y)
    return y


@pl.jit
def spmd_scale(x: pl.Tensor, factors: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.spmd(SP_BLOCKS):
        y = scale_block(x, factors, y)
    return y


def test_spmd_per_block_scale():
    torch.manual_seed(3)
    x = torch.randn(SP_ROWS, SP_COLS)
    factors = torch.tensor([[0.5, -2.0, 3.0, 7.25]])
    y = torch.full((SP_ROWS, SP_COLS), float("nan"))
    spmd_scale(x, factors, y)
    expected = x * factors[0].repeat_interleave(SP_ROWS // SP_BLOCKS)[:, None]
    torch.testing.assert_close(y, expected, rtol=0, atol=0)
