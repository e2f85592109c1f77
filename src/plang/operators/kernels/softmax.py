"""`RowSoftmax`: ``softmax(x, dim=-1)`` of an [M, N] fp32 tensor."""

from __future__ import annotations

import torch

import plang as pl

from ...dtypes import FP32
from ..library import JitOperator
from ..operands import In, Out
from ..params import param, tunable
from .common import BLOCKS, ROWS, RowBlocks


class RowSoftmax(RowBlocks, JitOperator):
    """y = softmax(x, dim=-1): `blocks` SPMD blocks, each walking its rows `rows` at a time
    (load a [rows, N] tile, subtract the row max, exponentiate, divide by the row sum)."""

    M: int = param()
    N: int = param()
    rows: int | None = tunable(domain=ROWS)
    blocks: int | None = tunable(domain=BLOCKS)
    x = In(M, N, dtype=FP32, obj_shape=(rows, N), per=blocks)
    y = Out(like=x, dtype=FP32)

    def build(self, cores):
        rows, _ = cores.x.obj_shape  # the tile one step loads, and the SPMD blocks (per=)
        blocks = cores.x.lanes

        @pl.jit.incore
        def softmax_block(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            m, n = x.shape
            share = m // blocks
            first = pl.tile.get_block_idx() * share
            for r in pl.range(first, first + share, rows):
                t = pl.load(x, [r, 0], [rows, n])
                e = pl.row_expand_expdif(t, pl.row_max(t))
                y = pl.store(pl.row_expand_div(e, pl.row_sum(e)), [r, 0], y)
            return y

        @pl.jit
        def row_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            with pl.spmd(blocks):
                y = softmax_block(x, y)
            return y

        return row_softmax

    def reference(self, x):
        return torch.softmax(x, dim=-1)
