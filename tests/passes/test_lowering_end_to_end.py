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


VECTOR_SCALAR_IN_MIXED_KERNEL = """
import plang as pl


@pl.program
class C:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             sc: pl.Tensor[[1, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            st = pl.load(sc, [0, 0], [1, 16])
            k2 = pl.tile.read(st, [0, 0]) * 2.0
            c = pl.matmul(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                          pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat))
            d = pl.mul(pl.move(c, target_memory=pl.MemorySpace.Vec), k2)
            out = pl.store(d, [0, 0], out)
        return out
"""


def test_mixed_kernel_with_a_vector_side_scalar_runs_end_to_end():
    compiled = pl.compile(pl.parse(VECTOR_SCALAR_IN_MIXED_KERNEL))
    a, b, sc, out = torch.randn(16, 16), torch.randn(16, 16), torch.randn(1, 16), torch.empty(16, 16)
    compiled(a, b, sc, out)
    torch.testing.assert_close(out, (a @ b) * sc[0, 0] * 2, rtol=1e-4, atol=1e-4)
