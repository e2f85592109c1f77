"""Pass-pipeline features checked end to end: the lowered program runs on the simulated
chip and matches torch."""

from __future__ import annotations

import torch

import plang as pl

BLOCKS = 4


@pl.jit.incore
def exp_block(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows = x.shape[0] // BLOCKS
    r = pl.tile.get_block_idx() * rows
    t = pl.load(x, [r, 0], [rows, x.shape[1]])
    y = pl.store(pl.exp(t), [r, 0], y)
    return y


@pl.jit
def spmd_loop_dispatch(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.spmd(BLOCKS):
        y = exp_block(x, y)
    return y


def test_spmd_loop_body_calling_a_kernel_dispatches_it_on_every_block():
    x, y = torch.randn(256, 64), torch.zeros(256, 64)
    spmd_loop_dispatch(x, y)
    torch.testing.assert_close(y, x.exp())
    lowered = spmd_loop_dispatch.lower(x, y)
    spmd = [f for f in lowered.functions.values() if f.func_type is pl.FunctionType.Spmd]
    assert len(spmd) == 1 and spmd[0].attrs["core_num"] == BLOCKS
