"""An L3 `@pl.program` (a HOST Orchestrator and SubWorkers over a chip program) compiled with
`ir.compile(..., distributed_config=)`: the chip entry runs, SubWorker callbacks bound at
`prepare(callbacks=)` see its result, a runtime-bound SubWorker left unbound is refused, loops
run, and a two-rank program called from this (pytest) process runs on two launched ranks."""

from __future__ import annotations

import pytest
import torch

import plang as pl
import plang.distributed as pld
from plang import ir
from plang.distributed.runtime import DistributedError
from plang.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from plang.ir.equality import structural_equal
from plang.runtime.distributed_runner import _tensor_from_continuous

pytest.importorskip("mpi4py")

T = pl.Tensor[[16, 16], pl.FP32]


@pl.program
class Inspected:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: T, b: T, f: pl.Out[T]) -> T:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, a: T, b: T, f: pl.Out[T]) -> T:
        return self.tile_add(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(f: T):
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def log_done(f: T):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: T, b: T, f: pl.Out[T]) -> T:
        out = self.chip_orch(a, b, f, device=0)
        self.inspect(out)
        self.log_done(out)
        return out


@pl.program
class Looping:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def log(x: T):
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: T):
        for i in pl.range(3):
            if i % 2 == 0:
                self.log(x)


@pl.program
class PythonReduce:
    """A HOST SubWorker's body is Python (torch), run as written; the host orchestrator
    allocates its intermediates and the call allocates its Out tensor (return style)."""

    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: T, b: T, f: pl.Out[T]) -> T:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: T, b: T, f: pl.Out[T]) -> T:
        return self.tile_add(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def reduce(s: T, d: T, f: pl.Out[T]) -> T:
        f[:] = torch.maximum(s, d) * 2
        return f

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: T, b: T, f: pl.Out[T]) -> T:
        s: T = pl.create_tensor([16, 16], dtype=pl.FP32)
        s = self.chip_add(a, b, s)
        return self.reduce(s, a, f)


ROW = pl.Tensor[[1, 64], pl.FP32]


@pl.program
class RingShift:
    """Rank r puts its row of `inputs` into rank (r + 1) % n's window, then signals it."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: ROW, out: pl.Out[ROW], src: pld.DistributedTensor[[1, 64], pl.FP32],
             dst: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32],
             peer: pl.Scalar[pl.INT32]) -> ROW:
        src = pl.store(pl.load(inp, [0, 0], [1, 64]), [0, 0], src)
        pld.tensor.put(dst, peer=peer, src=src)
        pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal=sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return pl.store(pl.load(dst, [0, 0], [1, 64]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: ROW, out: pl.Out[ROW], src: pld.DistributedTensor[[1, 64], pl.FP32],
                  dst: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32],
                  peer: pl.Scalar[pl.INT32]) -> ROW:
        return self.step(inp, out, src, dst, sig, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[2, 1, 64], pl.FP32],
                  outputs: pl.Out[pl.Tensor[[2, 1, 64], pl.FP32]]) -> pl.Tensor[[2, 1, 64], pl.FP32]:
        src_buf = pld.alloc_window_buffer(64 * 4)
        dst_buf = pld.alloc_window_buffer(64 * 4)
        sig_buf = pld.alloc_window_buffer(4)
        for r in pl.range(pld.world_size()):
            src = pld.window(src_buf, [1, 64], dtype=pl.FP32)
            dst = pld.window(dst_buf, [1, 64], dtype=pl.FP32)
            sig = pld.window(sig_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], src, dst, sig, (r + 1) % pld.world_size(), device=r)
        return outputs


@pl.program
class OnDeviceOne:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_copy(self, a: T, f: pl.Out[T]) -> T:
        return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, a: T, f: pl.Out[T]) -> T:
        return self.tile_copy(a, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: T, f: pl.Out[T]) -> T:
        return self.chip_orch(a, f, device=1)


ONE_RANK = DistributedConfig(device_ids=[0])


def test_the_subworker_declarations():
    assert Inspected.get_function("inspect").requires_runtime_binding
    assert not Inspected.get_function("log_done").requires_runtime_binding
    assert Inspected.get_function("nothing") is None
    assert pl.parse(Inspected.as_python()).get_function("inspect").requires_runtime_binding


def test_a_bound_callback_sees_the_chip_result():
    compiled = ir.compile(Inspected, distributed_config=ONE_RANK)
    assert isinstance(compiled, DistributedCompiledProgram)
    a, b, f = torch.randn(16, 16), torch.randn(16, 16), torch.zeros(16, 16)
    seen = []

    def inspect(args):
        seen.append(_tensor_from_continuous(args[0]).clone())

    with compiled.prepare(callbacks={"inspect": inspect}) as rt:
        rt(a, b, f)
        rt(b, b, f)
    torch.testing.assert_close(f, 2 * b)
    assert len(seen) == 2
    torch.testing.assert_close(seen[0], a + b)


def test_a_callback_that_cannot_travel_to_launched_ranks_is_refused():
    compiled = ir.compile(Inspected, distributed_config=DistributedConfig(device_ids=[0, 1]))
    with pytest.raises(DistributedError, match=r"Inspected: the callbacks of a worker prepared outside its "
                                               r"ranks travel to them pickled, so they must be module-level"):
        compiled.prepare(callbacks={"inspect": lambda args: None})


def test_a_runtime_bound_subworker_must_be_bound():
    compiled = ir.compile(Inspected, distributed_config=ONE_RANK)
    with pytest.raises(ValueError, match=r"SubWorker 'inspect' of host_orch is runtime-bound .*"
                                         r"prepare\(callbacks=\{'inspect': fn\}\)"):
        compiled.prepare()
    with pytest.raises(ValueError, match=r"callbacks names \['other'\] are not sub-workers"):
        compiled.prepare(callbacks={"inspect": print, "other": print})
    with pytest.raises(DistributedError, match="'inspect' is runtime-bound .* dispatched unbound"):
        compiled(torch.zeros(16, 16), torch.zeros(16, 16), torch.zeros(16, 16))


def test_an_l3_orchestrator_runs_its_loops_and_branches():
    calls = []
    with ir.compile(Looping, distributed_config=ONE_RANK).prepare(callbacks={"log": calls.append}) as rt:
        rt(torch.ones(16, 16))
    assert len(calls) == 2 and torch.equal(calls[0][0], torch.ones(16, 16))


def test_a_python_subworker_body_and_a_return_style_call():
    assert "torch.maximum(s, d) * 2" in PythonReduce.as_python()
    assert structural_equal(pl.parse(PythonReduce.as_python()), PythonReduce)
    compiled = ir.compile(PythonReduce, distributed_config=ONE_RANK)
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    torch.testing.assert_close(compiled(a, b), torch.maximum(a + b, a) * 2)
    seen = []
    with compiled.prepare(sub_worker_overrides={"reduce": seen.append}) as rt:  # the older name
        rt(a, b, torch.zeros(16, 16))
    torch.testing.assert_close(seen[0][0], a + b)
    with compiled.prepare() as rt:  # a prepared worker's return-style call
        torch.testing.assert_close(rt(a, b), torch.maximum(a + b, a) * 2)


def test_a_dispatch_to_a_device_past_the_ranks_is_an_error():
    compiled = ir.compile(OnDeviceOne, distributed_config=ONE_RANK)
    with pytest.raises(DistributedError, match=r"chip_orch\(\.\.\., device=1\): there are 1 ranks"):
        compiled(torch.zeros(16, 16), torch.zeros(16, 16))


def test_a_two_rank_program_runs_on_launched_ranks_from_this_process():
    """`inputs[r]` is rank r's [1, 64] row; each rank receives its left neighbour's row."""
    compiled = ir.compile(RingShift, distributed_config=DistributedConfig(device_ids=[0, 1]))
    inputs = torch.stack([torch.arange(64.0).reshape(1, 64), 100 + torch.arange(64.0).reshape(1, 64)])
    outputs = torch.zeros(2, 1, 64)
    returned = compiled(inputs, outputs)  # what host_orch returns comes back too
    torch.testing.assert_close(outputs, torch.stack([inputs[1], inputs[0]]))
    torch.testing.assert_close(returned, outputs)


CAP, W = 4, 16
BLOCKS = pl.Tensor[[2 * CAP, W], pl.FP32]
WIN = pld.DistributedTensor[[2 * CAP, W], pl.FP32]
COUNTS = pl.Tensor[[2, 1], pl.INT32]


@pl.program
class VariableExchange:
    """`pld.tensor.all_to_all_v`: rank r sends `counts[r][d]` valid rows to d."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: BLOCKS, counts: COUNTS, out: pl.Out[BLOCKS], got: pl.Out[COUNTS], stage: WIN,
             target: WIN, sig: pld.DistributedTensor[[2, 1], pl.INT32],
             rc: pld.DistributedTensor[[2, 1], pl.INT32]) -> BLOCKS:
        stage = pl.store(pl.load(inp, [0, 0], [2 * CAP, W]), [0, 0], stage)
        target = pld.tensor.all_to_all_v(stage, target, sig, counts, rc)
        for d in pl.range(2):
            pl.write(got, [d, 0], pl.read(rc, [d, 0]))
        return pl.store(pl.load(target, [0, 0], [2 * CAP, W]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: BLOCKS, counts: COUNTS, out: pl.Out[BLOCKS], got: pl.Out[COUNTS], stage: WIN,
             target: WIN, sig: pld.DistributedTensor[[2, 1], pl.INT32],
             rc: pld.DistributedTensor[[2, 1], pl.INT32]) -> BLOCKS:
        return self.step(inp, counts, out, got, stage, target, sig, rc)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[2, 2 * CAP, W], pl.FP32], counts: pl.Tensor[[2, 2, 1], pl.INT32],
                  outputs: pl.Out[pl.Tensor[[2, 2 * CAP, W], pl.FP32]],
                  got: pl.Out[pl.Tensor[[2, 2, 1], pl.INT32]]):
        stage_buf = pld.alloc_window_buffer([2 * CAP, W], dtype=pl.FP32)
        target_buf = pld.alloc_window_buffer([2 * CAP, W], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        rc_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(2):
            stage = pld.window(stage_buf, [2 * CAP, W], dtype=pl.FP32)
            target = pld.window(target_buf, [2 * CAP, W], dtype=pl.FP32)
            sig = pld.window(sig_buf, [2, 1], dtype=pl.INT32)
            rc = pld.window(rc_buf, [2, 1], dtype=pl.INT32)
            self.chip(inputs[r], counts[r], outputs[r], got[r], stage, target, sig, rc, device=r)


def test_a_variable_exchange_on_two_ranks():
    compiled = ir.compile(VariableExchange, distributed_config=DistributedConfig(device_ids=[0, 1]))
    inputs = torch.randn(2, 2 * CAP, W)
    counts = torch.tensor([[[1], [3]], [[4], [9]]], dtype=torch.int32)  # 9 is clamped to CAP
    outputs, got = torch.zeros(2, 2 * CAP, W), torch.zeros(2, 2, 1, dtype=torch.int32)
    compiled(inputs, counts, outputs, got)
    for dst in range(2):
        for src in range(2):
            n = min(int(counts[src, dst, 0]), CAP)
            assert int(got[dst, src, 0]) == n
            sent = inputs[src, dst * CAP:dst * CAP + n]
            torch.testing.assert_close(outputs[dst, src * CAP:src * CAP + n], sent)


B16 = pl.Tensor[[16, 16], pl.BF16]


@pl.program
class Bf16OnRankOne:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_copy(self, a: B16, f: pl.Out[B16]) -> B16:
        return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, a: B16, f: pl.Out[B16]) -> B16:
        return self.tile_copy(a, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: B16, f: pl.Out[B16]) -> B16:
        return self.chip_orch(a, f, device=1)


def test_a_bf16_result_reaches_every_rank():
    """Rank 1 writes the BF16 output; the broadcast at the end of the body carries its bytes."""
    compiled = ir.compile(Bf16OnRankOne, distributed_config=DistributedConfig(device_ids=[0, 1]))
    a, f = torch.randn(16, 16).to(torch.bfloat16), torch.zeros(16, 16, dtype=torch.bfloat16)
    compiled(a, f)
    assert torch.equal(f, a)


def test_a_failing_rank_of_a_launched_run_is_reported_to_the_caller():
    compiled = ir.compile(Inspected, distributed_config=DistributedConfig(device_ids=[0, 3]))
    with pytest.raises(DistributedError, match=r"(?s)Inspected: the run on 2 ranks failed.*"
                                               r"rank \d of 2 failed.*'inspect' is runtime-bound"):
        compiled(torch.zeros(16, 16), torch.zeros(16, 16), torch.zeros(16, 16))
