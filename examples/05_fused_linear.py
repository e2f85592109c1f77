"""Fused linear layer: y = silu(x @ w + bias), one kernel, no intermediate in DDR.

One core kernel mixes cube work (the matmul over K) and vector work (bias, SiLU).
ExpandMixedKernel splits it into an AIC kernel (cube) and an AIV kernel (vector) that run
together on one core group: the fp32 product crosses from cube to vector through an
on-chip pipe instead of a round trip through DDR.
"""

import torch

import plang as pl

BM, BK = 64, 64  # rows per block, K-slice per matmul step


@pl.jit.incore
def linear_silu(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    m, k_total = x.shape
    n = w.shape[1]
    bias_t = pl.load(bias, [0, 0], [1, n])                  # [1, N] fp32
    for i in pl.range(0, m, BM):
        # cube: acc = x[i:i+BM, :] @ w, accumulated over K-slices
        acc0 = pl.matmul(pl.load(x, [i, 0], [BM, BK]), pl.load(w, [0, 0], [BK, n]))
        for k, (acc,) in pl.range(BK, k_total, BK, init_values=(acc0,)):
            acc_next = pl.matmul_acc(acc, pl.load(x, [i, k], [BM, BK]), pl.load(w, [k, 0], [BK, n]))
            h = pl.yield_(acc_next)
        # vector: + bias (broadcast over rows), then silu(h) = h / (1 + exp(-h))
        h = pl.col_expand_add(h, bias_t)
        denom = pl.add(pl.exp(pl.neg(h)), 1.0)
        out = pl.div(h, denom)
        y = pl.store(out, [i, 0], y)
    return y


@pl.jit
def fused_linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = linear_silu(x, w, bias, y)
    return y


if __name__ == "__main__":
    M, K, N = 256, 256, 128
    x = torch.randn(M, K, dtype=torch.float16)
    w = (torch.randn(K, N) / K**0.5).to(torch.float16)
    bias = torch.randn(1, N)
    y = torch.empty(M, N)
    fused_linear(x, w, bias, y)
    expected = torch.nn.functional.silu(x.float() @ w.float() + bias)
    torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)
    print(f"fused linear: silu(x @ w + bias), x [{M}, {K}] fp16, w [{K}, {N}] fp16 -> y fp32, "
          f"cube matmul + vector epilogue in one kernel, checked against torch: OK")
