"""`pl.system.syncall` on the simulated chip: SPMD blocks (and the cores of a Group) that
exchange data through DDR across the barrier, the hard form's launch rules, and the located
errors of a barrier that can never complete (a timeout, the watchdog)."""

import time

import pytest
import torch

import plang as pl
from plang.ir.pipeline import compile_for
from plang.runtime import BoundsError, ChipWorker, RunConfig, SyncAllError

BLOCKS, ROWS, COLS, WS = 4, 8, 64, 16
TOTAL = BLOCKS * ROWS
CFG = RunConfig(platform="cpu", clusters=2, workers=1)  # 4 AIV cores, one host worker thread


def _exchange(mode: str, used: int, sync_start: bool, blocks: int = BLOCKS, step: int = ROWS):
    """Block b writes 2 * x[b] into `buf`, meets the others at the barrier, then copies the
    next block's rows of `buf` into out[b]: correct only if every block wrote before any read.
    (x[b] starts at row b * `step`.)"""

    @pl.program
    class Exchange:
        @pl.function(type=pl.FunctionType.InCore)
        def swap(self, x: pl.Tensor[[TOTAL, COLS], pl.FP32], buf: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]],
                 ws: pl.Tensor[[WS], pl.INT32], out: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]]
                 ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            b = pl.tile.get_block_idx()
            t = pl.load(x, [b * step, 0], [ROWS, COLS])
            buf = pl.store(pl.add(t, t), [b * ROWS, 0], buf)
            if mode == "soft":
                pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=used)
            else:
                pl.system.syncall(core_type="aiv_only")
            nxt = pl.load(buf, [((b + 1) % blocks) * ROWS, 0], [ROWS, COLS])
            out = pl.store(nxt, [b * ROWS, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[TOTAL, COLS], pl.FP32], buf: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]],
                 ws: pl.Tensor[[WS], pl.INT32], out: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]]
                 ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            with pl.spmd(blocks, sync_start=sync_start):
                out = self.swap(x, buf, ws, out)
            return out

    return Exchange


def _run(program, config: RunConfig = CFG):
    x = torch.randn(TOTAL, COLS)
    buf, ws, out = torch.zeros(TOTAL, COLS), torch.zeros(WS, dtype=torch.int32), torch.zeros(TOTAL, COLS)
    with ChipWorker(config) as worker:
        worker.run(compile_for(program, config), x, buf, ws, out)
    return x, ws, out


def _expected(x: torch.Tensor) -> torch.Tensor:
    return torch.roll(2 * x.reshape(BLOCKS, ROWS, COLS), -1, dims=0).reshape(TOTAL, COLS)


@pytest.mark.parametrize("mode", ["soft", "hard"])
def test_blocks_exchange_rows_across_the_barrier(mode):
    # one worker thread: the launch still runs its 4 blocks at once (the barrier needs them)
    x, ws, out = _run(_exchange(mode, BLOCKS, sync_start=mode == "hard"))
    torch.testing.assert_close(out, _expected(x))
    assert int(ws[0]) == (BLOCKS if mode == "soft" else 0)  # the soft form counts in the workspace


def test_hard_barrier_at_partial_occupancy_is_a_located_error():
    with pytest.raises(SyncAllError, match=r"all 4 AIV cores .* \(got 2\)") as info:
        _run(_exchange("hard", 0, sync_start=True, blocks=2))
    assert "test_syncall_barrier.py" in str(info.value)


def test_barrier_that_never_completes_times_out_naming_it():
    config = RunConfig(platform="cpu", clusters=2, pipe_timeout=0.5)
    with pytest.raises(Exception, match=r"syncall\(mode='soft'.*timed out.*4 of 5 participants") as info:
        _run(_exchange("soft", BLOCKS + 1, sync_start=False), config)
    assert "test_syncall_barrier.py" in str(info.value)


def test_a_block_failing_before_the_barrier_releases_the_waiting_ones():
    config = RunConfig(platform="cpu", clusters=2, pipe_timeout=60.0)
    start = time.monotonic()
    with pytest.raises(Exception, match="out of bounds") as info:  # blocks 2 and 3 read past x
        _run(_exchange("soft", BLOCKS, sync_start=False, step=3 * ROWS), config)
    assert isinstance(info.value.__cause__, BoundsError)
    assert time.monotonic() - start < 30  # blocks 0 and 1 did not wait out the timeout


def test_watchdog_cancels_blocks_waiting_at_a_barrier():
    config = RunConfig(platform="cpu", clusters=2, kernel_timeout=0.5)
    with pytest.raises(Exception, match="kernel_timeout"):
        _run(_exchange("soft", BLOCKS + 1, sync_start=False), config)


M, K, N = 16, 32, 16


@pl.program
class MixedAivBarrier:
    """A Group per core group: the cube computes a @ b, both AIV lanes of every group meet at a
    hard aiv_only barrier (the AIC core is no participant), then add 1."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[2 * M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             out: pl.Out[pl.Tensor[[2 * M, N], pl.FP32]]) -> pl.Tensor[[2 * M, N], pl.FP32]:
        for ob in pl.spmd(2, sync_start=True, name_hint="mixed_barrier"):
            c = pl.matmul(pl.slice(a, [M, K], [ob * M, 0]), b)
            pl.system.syncall(core_type="aiv_only")
            out = pl.assemble(out, pl.add(c, 1.0), [ob * M, 0])
        return out


def test_aiv_only_barrier_in_a_mixed_kernel_spans_the_vector_lanes():
    a, b, out = torch.randn(2 * M, K), torch.randn(K, N), torch.zeros(2 * M, N)
    config = RunConfig(platform="cpu", clusters=2, pipe_timeout=5.0)
    compiled = compile_for(MixedAivBarrier, config)
    barriers = {name: [s.core for s in k.syncall_sites] for name, k in compiled.kernels.items()}
    assert sorted(barriers.values()) == [[], ["AIV"]]  # the AIC kernel has no barrier
    with ChipWorker(config) as worker:
        worker.run(compiled, a, b, out)
    torch.testing.assert_close(out, a @ b + 1, rtol=1e-4, atol=1e-4)
