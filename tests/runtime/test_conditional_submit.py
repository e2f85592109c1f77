"""A manual-scope program that submits the same Out tensor from both branches of an `if`
inside loops (one with explicit init_values, `out` carried implicitly beside it) compiles
and computes every stripe, end to end through `plang.runtime.run`."""

import torch

import plang as pl
from plang.runtime import run

BRANCHES, TILE, COLS, PHASES = 4, 16, 32, 2
ROWS = (BRANCHES + PHASES * BRANCHES) * TILE
M = pl.Tensor[[ROWS, COLS], pl.FP32]


@pl.program
class ConditionalSubmit:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: M, row: pl.Scalar[pl.INDEX], scale: pl.Scalar[pl.FP32], out: pl.Out[M]) -> M:
        t: pl.Tile[[TILE, COLS], pl.FP32] = pl.load(data, [row, 0], [TILE, COLS])
        ret: M = pl.store(pl.mul(t, scale), [row, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: M, out: pl.Out[M]) -> M:
        with pl.manual_scope():
            tids = pl.array.create(BRANCHES, pl.TASK_ID)
            for b in pl.parallel(BRANCHES):
                out, tid = pl.submit(self.stripe, data, b * TILE, 2.0, out)
                tids[b] = tid
            for phase, (prev,) in pl.range(PHASES, init_values=(tids,)):
                nxt = pl.array.create(BRANCHES, pl.TASK_ID)
                for b in pl.parallel(BRANCHES):
                    row: pl.Scalar[pl.INDEX] = (BRANCHES + phase * BRANCHES + b) * TILE
                    if b >= 2:
                        out, tid = pl.submit(self.stripe, data, row, 3.0, out, deps=[prev])
                    else:
                        first = prev[0]
                        out, tid = pl.submit(self.stripe, data, row, -1.0, out, deps=[first])
                    nxt[b] = tid
                tids = pl.yield_(nxt)
        return out


def test_both_branches_write_their_stripes():
    data, out = torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)
    run(ConditionalSubmit, data, out)
    scale = torch.tensor([2.0] * BRANCHES + [-1.0, -1.0, 3.0, 3.0] * PHASES).repeat_interleave(TILE)
    torch.testing.assert_close(out, data * scale[:, None])
