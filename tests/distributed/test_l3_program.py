"""An L3 `@pl.program` (a HOST Orchestrator and SubWorkers over a chip program) compiled with
`ir.compile(..., distributed_config=)`: the chip entry runs, SubWorker callbacks bound at
`prepare(callbacks=)` see its result, and a runtime-bound SubWorker left unbound is refused."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang import ir
from plang.distributed.runtime import DistributedError
from plang.errors import UnsupportedConstructError
from plang.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
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
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: T):
        for i in pl.range(2):
            self.log(x)


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


def test_a_runtime_bound_subworker_must_be_bound():
    compiled = ir.compile(Inspected, distributed_config=ONE_RANK)
    with pytest.raises(ValueError, match=r"SubWorker 'inspect' of host_orch is runtime-bound .*"
                                         r"prepare\(callbacks=\{'inspect': fn\}\)"):
        compiled.prepare()
    with pytest.raises(ValueError, match=r"callbacks names \['other'\] are not sub-workers"):
        compiled.prepare(callbacks={"inspect": print, "other": print})
    with pytest.raises(DistributedError, match="'inspect' is runtime-bound .* dispatched unbound"):
        compiled(torch.zeros(16, 16), torch.zeros(16, 16), torch.zeros(16, 16))


def test_a_loop_in_an_l3_orchestrator_is_a_located_error():
    compiled = ir.compile(Looping, distributed_config=ONE_RANK)
    with pytest.raises(UnsupportedConstructError, match="a For statement in L3 orchestrator 'host_orch'") \
            as e:
        compiled(torch.zeros(16, 16))
    assert "test_l3_program.py" in str(e.value) and "@pl.jit.host" in str(e.value)


def test_a_dispatch_to_another_device_is_a_located_error():
    compiled = ir.compile(OnDeviceOne, distributed_config=ONE_RANK)
    with pytest.raises(UnsupportedConstructError, match="a dispatch to device 1 in L3 orchestrator"):
        compiled(torch.zeros(16, 16), torch.zeros(16, 16))
