"""Windows of dtypes MPI has no numbers of (BF16): their data moves bit for bit through a
remote store and a separate reading kernel, and a reduction over them is an FP32 sum
rounded once; an atomic add into them is refused. Each program runs on two launched ranks,
called from pytest."""

from __future__ import annotations

import pytest
import torch

import plang as pl
import plang.distributed as pld
from plang import ir
from plang.distributed.runtime import DistributedError
from plang.ir.distributed_compiled_program import DistributedConfig

pytest.importorskip("mpi4py")

N, D = 2, 64
ROWS = pl.Tensor[[N, D], pl.BF16]
WIN = pld.DistributedTensor[[N, D], pl.BF16]
DONE = pld.DistributedTensor[[N, 1], pl.INT32]
ALL = pl.Tensor[[N, N, D], pl.BF16]


@pl.program
class PushThenRead:
    """Rank r stores its row r into row r of rank (r + 1) % N's window, both ranks meet at a
    signal barrier, and another kernel copies the window out."""

    @pl.function(type=pl.FunctionType.InCore)
    def push(self, src: ROWS, win: WIN, done: DONE, me: pl.Scalar[pl.INT32]) -> ROWS:
        pld.tile.remote_store(pl.load(src, [me, 0], [1, D]), target=win, peer=(me + 1) % N, offsets=[me, 0])
        pld.system.notify(target=done, peer=(me + 1) % N, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal=done, offsets=[(me + 1) % N, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return src

    @pl.function(type=pl.FunctionType.InCore)
    def read(self, win: WIN, out: pl.Out[ROWS]) -> ROWS:
        return pl.store(pl.load(win, [0, 0], [N, D]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: ROWS, out: pl.Out[ROWS], win: WIN, done: DONE, me: pl.Scalar[pl.INT32]) -> ROWS:
        self.push(src, win, done, me)
        return self.read(win, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, srcs: ALL, outs: pl.Out[ALL]) -> ALL:
        win_buf = pld.alloc_window_buffer(N * D * 2)
        done_buf = pld.alloc_window_buffer(N * 4)
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [N, D], dtype=pl.BF16)
            done = pld.window(done_buf, [N, 1], dtype=pl.INT32)
            self.chip(srcs[r], outs[r], win, done, r, device=r)
        return outs


@pl.program
class SumRows:
    """Every rank copies its rows into a BF16 window and all-reduces it."""

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, src: ROWS, win: WIN, out: pl.Out[ROWS]) -> ROWS:
        win = pl.store(pl.load(src, [0, 0], [N, D]), [0, 0], win)
        win = pld.tensor.allreduce(win, op=pld.ReduceOp.Sum)
        return pl.store(pl.load(win, [0, 0], [N, D]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: ROWS, out: pl.Out[ROWS], win: WIN) -> ROWS:
        return self.total(src, win, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, srcs: ALL, outs: pl.Out[ALL]) -> ALL:
        win_buf = pld.alloc_window_buffer(N * D * 2)
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [N, D], dtype=pl.BF16)
            self.chip(srcs[r], outs[r], win, device=r)
        return outs


def _run(program) -> tuple[torch.Tensor, torch.Tensor]:
    compiled = ir.compile(program, distributed_config=DistributedConfig(device_ids=list(range(N))))
    srcs = torch.randn(N, N, D).to(torch.bfloat16)
    outs = torch.zeros(N, N, D, dtype=torch.bfloat16)
    compiled(srcs, outs)
    return srcs, outs


def test_a_bf16_window_filled_by_a_peer_is_read_bit_for_bit():
    srcs, outs = _run(PushThenRead)
    for q in range(N):
        pushed = (q - 1) % N  # the rank whose row landed in q's window
        assert torch.equal(outs[q][pushed], srcs[pushed][pushed])
        assert torch.equal(outs[q][q], torch.zeros(D, dtype=torch.bfloat16))  # never written


def test_an_allreduce_of_a_bf16_window_sums_in_fp32_and_rounds_once():
    srcs, outs = _run(SumRows)
    want = srcs.float().sum(0).to(torch.bfloat16)
    for q in range(N):
        assert torch.equal(outs[q], want)


@pl.program
class AtomicIntoBf16:
    @pl.function(type=pl.FunctionType.InCore)
    def add_into(self, src: ROWS, win: WIN, out: pl.Out[ROWS]) -> ROWS:
        pld.tile.remote_store(pl.load(src, [0, 0], [N, D]), target=win, peer=0, offsets=[0, 0],
                              atomic=pld.AtomicType.Add)
        return pl.store(pl.load(src, [0, 0], [N, D]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: ROWS, out: pl.Out[ROWS], win: WIN) -> ROWS:
        return self.add_into(src, win, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, srcs: ALL, outs: pl.Out[ALL]) -> ALL:
        win_buf = pld.alloc_window_buffer(N * D * 2)
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [N, D], dtype=pl.BF16)
            self.chip(srcs[r], outs[r], win, device=r)
        return outs


def test_an_atomic_add_into_a_bf16_window_is_refused():
    with pytest.raises(DistributedError, match=r"pld.remote_store with atomic add into a BF16 "
                                               r"window: MPI adds no such numbers; add into an FP32 window"):
        _run(AtomicIntoBf16)
