"""The reference's packed row vector in `pl.tile.row_expand_add`: a row-major rhs of
`32 / element bytes` columns whose block repeats along each row (rhs[i, j % P])."""

from __future__ import annotations

import pytest
import torch

import plang as pl


@pl.jit.incore
def packed_add(x: pl.Tensor, rows: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 40])
    r = pl.load(rows, [0, 0], [16, rows.shape[1]])
    return pl.store(pl.tile.row_expand_add(t, r), [0, 0], out)


@pl.jit
def entry(x: pl.Tensor, rows: pl.Tensor, out: pl.Out[pl.Tensor]):
    return packed_add(x, rows, out)


@pytest.mark.parametrize("dtype,block", [(torch.float32, 8), (torch.float16, 16), (torch.int8, 32),
                                         (torch.float32, 1)])
def test_packed_row_vector_repeats_along_each_row(dtype, block):
    x = (torch.randn(16, 40) * 10).to(dtype)
    rows = (torch.randn(16, block) * 10).to(dtype)
    out = torch.zeros(16, 40, dtype=dtype)
    entry(x, rows, out)
    want = x + rows.repeat(1, (40 + block - 1) // block)[:, :40]
    torch.testing.assert_close(out, want, rtol=1e-3, atol=1e-2)


def test_other_widths_are_rejected():
    with pytest.raises(pl.Error, match=r"must be \[16, 1\] \(one value per row\)"):
        entry(torch.randn(16, 40), torch.randn(16, 4), torch.zeros(16, 40))
