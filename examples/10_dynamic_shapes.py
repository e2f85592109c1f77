"""Dynamic shapes: one compiled kernel for every number of rows M.

`M = pl.dynamic("M")` names a dimension that stays symbolic: the annotation
`pl.Tensor[[M, N], pl.FP32]` leaves the row count out of the specialization, so calls with
M = 1, 100 or 1000 share one compiled program (the JIT cache key ignores dynamic dims) and
the kernel reads the real extent at run time. The last block of rows may be partial: its
tile keeps its static [ROWS, N] shape but carries a smaller *valid* shape, and the store
writes only the valid rows.
"""

import torch

import plang as pl

M = pl.dynamic("M")
N = 128
ROWS = 32


@pl.jit.incore
def scale_rows_kernel(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    m = x.shape[0]                                 # the row count, read at run time
    for r in pl.range(0, m, ROWS):
        valid = pl.min(m - r, ROWS)                # ROWS, or fewer in the last block
        t = pl.load(x, [r, 0], [ROWS, N], valid_shape=[valid, N])
        peak = pl.row_max(pl.abs(t))               # [ROWS, 1]: max |x| of each row
        y = pl.store(pl.row_expand_div(t, peak), [r, 0], y)
    return y


@pl.jit
def scale_rows(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    y = scale_rows_kernel(x, y)
    return y


if __name__ == "__main__":
    sizes = (1, 100, 257, 1000)
    for m in sizes:
        x = torch.randn(m, N)
        y = torch.empty(m, N)
        scale_rows(x, y)
        torch.testing.assert_close(y, x / x.abs().amax(dim=-1, keepdim=True), rtol=1e-6, atol=1e-6)
    # every size above ran the same compiled program
    first = scale_rows.compile(torch.empty(1, N), torch.empty(1, N))
    assert first is scale_rows.compile(torch.empty(1000, N), torch.empty(1000, N))
    print(f"dynamic shapes: y = x / max|x| per row for M in {sizes} (N = {N}), one compiled "
          f"program for every M, checked against torch: OK")
