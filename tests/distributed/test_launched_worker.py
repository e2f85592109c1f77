"""A prepared worker of a two-rank L3 program made from pytest (not a rank): its ranks are
launched once and serve every dispatch; a persistent worker's windows outlive each call,
zeroed again unless `reset_persistent_windows=False`."""

from __future__ import annotations

import pytest
import torch

import plang as pl
import plang.distributed as pld
from plang import ir
from plang.distributed.runtime import DistributedError
from plang.ir.distributed_compiled_program import DistributedConfig

pytest.importorskip("mpi4py")

CELL = pl.Tensor[[1, 1], pl.INT32]
SIG = pld.DistributedTensor[[1, 1], pl.INT32]


@pl.program
class Counter:
    """Each rank adds 1 to its own window cell and reports the cell."""

    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, out: pl.Out[CELL], sig: SIG, me: pl.Scalar[pl.INT32]) -> CELL:
        pld.system.notify(target=sig, peer=me, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        seen: pl.Scalar[pl.INT32] = pl.read(sig, [0, 0])
        pl.write(out, [0, 0], seen)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, out: pl.Out[CELL], sig: SIG, me: pl.Scalar[pl.INT32]) -> CELL:
        return self.bump(out, sig, me)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, outs: pl.Out[pl.Tensor[[2, 1, 1], pl.INT32]]) -> pl.Tensor[[2, 1, 1], pl.INT32]:
        sig_buf = pld.alloc_window_buffer(4)
        for r in pl.range(pld.world_size()):
            sig = pld.window(sig_buf, [1, 1], dtype=pl.INT32)
            self.chip(outs[r], sig, r, device=r)
        return outs


def _compiled():
    return ir.compile(Counter, distributed_config=DistributedConfig(device_ids=[0, 1]))


def _counts(worker, calls: int = 3) -> list[list[int]]:
    seen = []
    for _ in range(calls):
        outs = torch.full((2, 1, 1), -1, dtype=torch.int32)
        worker(outs)
        seen.append(outs.flatten().tolist())
    return seen


@pytest.mark.parametrize("keywords, want", [
    ({}, [[1, 1]] * 3),
    ({"persistent": True}, [[1, 1]] * 3),
    ({"persistent": True, "reset_persistent_windows": False}, [[1, 1], [2, 2], [3, 3]]),
])
def test_a_prepared_two_rank_worker_serves_every_dispatch(keywords: dict, want: list):
    with _compiled().prepare(**keywords) as worker:
        assert _counts(worker) == want
    with pytest.raises(RuntimeError, match=r"DistributedWorker.run\(\) called after close\(\)"):
        worker(torch.zeros(2, 1, 1, dtype=torch.int32))


@pl.program
class Noisy:
    """A HOST SubWorker that writes to its rank's stderr."""

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def warn(outs: pl.Tensor[[2, 1, 1], pl.INT32]):
        __import__("sys").stderr.write("a rank's warning\n")

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, outs: pl.Out[pl.Tensor[[2, 1, 1], pl.INT32]]) -> pl.Tensor[[2, 1, 1], pl.INT32]:
        self.warn(outs)
        return outs


def test_a_return_style_call_returns_the_out_tensor_it_allocated():
    with _compiled().prepare() as worker:
        assert worker().flatten().tolist() == [1, 1]


def test_what_the_launched_ranks_write_to_stderr_reaches_the_caller(capfd):
    compiled = ir.compile(Noisy, distributed_config=DistributedConfig(device_ids=[0, 1]))
    compiled(torch.zeros(2, 1, 1, dtype=torch.int32))
    assert "a rank's warning" in capfd.readouterr().err
    with compiled.prepare() as worker:
        worker(torch.zeros(2, 1, 1, dtype=torch.int32))
        assert "a rank's warning" in capfd.readouterr().err  # after the call, not only at close


def test_what_a_launched_worker_cannot_do_is_a_clear_error():
    compiled = _compiled()
    with compiled.prepare() as worker:
        with pytest.raises(DistributedError, match=r"Counter: resident tensors of a worker on 2 ranks live "
                                                   r"on the ranks: start this script under mpiexec"):
            worker.alloc_tensor([4], pl.FP32)
        other = _compiled()
        worker.register(other)
        with pytest.raises(ValueError, match=r"host_orch was registered after this worker's ranks started"):
            worker.run(other, torch.zeros(2, 1, 1, dtype=torch.int32))
        outs = torch.zeros(2, 1, 1, dtype=torch.int32)
        worker.run(compiled, outs)  # still serving
        assert outs.flatten().tolist() == [1, 1]
