"""A software-pipelined loop: `pl.pipeline(n, stage=2)`.

The kernel walks x in blocks of ROWS rows, applies GELU (tanh-free "quick" form,
x * sigmoid(1.702 x)) to each block and keeps a running column sum of the result as a
loop-carried tile. `pl.pipeline(..., stage=2)` is a `pl.range` that LowerPipelineLoops
rewrites into a loop whose steps run two copies of the body (two blocks in flight, so a
chip with ping-pong buffers can load one block while it computes the other), plus a tail
loop when the trip count is odd. The result is the same as the plain loop's.
"""

import torch

import plang as pl

ROWS = 16


@pl.jit.incore
def gelu_colsum_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor], colsum: pl.Out[pl.Tensor]):
    m, n = x.shape
    zero = pl.full([1, n], dtype=pl.FP32, value=0.0)
    for i, (acc,) in pl.pipeline(m // ROWS, stage=2, init_values=(zero,)):
        t = pl.load(x, [i * ROWS, 0], [ROWS, n])
        g = pl.mul(t, pl.recip(pl.add(pl.exp(pl.mul(t, -1.702)), 1.0)))   # x * sigmoid(1.702 x)
        y = pl.store(g, [i * ROWS, 0], y)
        acc_next = pl.add(acc, pl.col_sum(g))                             # [1, n]
        total = pl.yield_(acc_next)
    colsum = pl.store(total, [0, 0], colsum)
    return y, colsum


@pl.jit
def gelu_colsum(x: pl.Tensor, y: pl.Out[pl.Tensor], colsum: pl.Out[pl.Tensor]):
    y, colsum = gelu_colsum_kernel(x, y, colsum)
    return y, colsum


if __name__ == "__main__":
    x = torch.randn(13 * ROWS, 256)          # 13 blocks: six pipelined steps of two, plus a tail
    y = torch.empty_like(x)
    colsum = torch.empty(1, 256)
    gelu_colsum(x, y, colsum)
    expected = x * torch.sigmoid(1.702 * x)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(colsum, expected.sum(dim=0, keepdim=True), rtol=1e-4, atol=1e-4)
    print(f"pipeline: quick-GELU and a column sum over {x.shape[0] // ROWS} blocks of {ROWS} rows "
          f"of a {tuple(x.shape)} fp32 tensor in a pl.pipeline(stage=2) loop, "
          f"checked against torch: OK")
