"""Row softmax with tile ops, one block of rows at a time.

For each block of ROWS rows the kernel loads a [ROWS, N] tile and computes the numerically
stable softmax of every row: subtract the row max, exponentiate, divide by the row sum.
`row_max` / `row_sum` reduce a [ROWS, N] tile to a [ROWS, 1] column and the
`row_expand_*` ops broadcast such a column back across the row.
"""

import torch

import plang as pl

ROWS = 16  # rows per block: a [16, 512] fp32 tile is 32 KiB of the vector buffer


@pl.jit.incore
def softmax_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    m, n = x.shape                              # static dims, known at specialization
    for r in pl.range(0, m, ROWS):
        t = pl.load(x, [r, 0], [ROWS, n])
        row_max = pl.row_max(t)                 # [ROWS, 1]
        e = pl.exp(pl.row_expand_sub(t, row_max))
        row_sum = pl.row_sum(e)                 # [ROWS, 1]
        p = pl.row_expand_div(e, row_sum)
        y = pl.store(p, [r, 0], y)
    return y


@pl.jit
def row_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = softmax_rows(x, y)
    return y


if __name__ == "__main__":
    x = torch.randn(256, 512) * 4
    y = torch.empty_like(x)
    row_softmax(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)
    print(f"row softmax: {x.shape[0]} rows of {x.shape[1]} fp32 in blocks of {ROWS} rows "
          f"(row_max, row_expand_sub, exp, row_sum, row_expand_div), checked against torch: OK")
