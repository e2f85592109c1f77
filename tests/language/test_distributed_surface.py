"""The `pld` namespace: distributed tensors, window buffers, signals and collectives parse
with their types, print with `import plang.distributed as pld` and round-trip."""

from __future__ import annotations

import textwrap

import pytest
import torch

import plang as pl
import plang.distributed as pld
from plang.codegen.torch_ref import run_torch_ref, torch_codegen
from plang.ir import CommCtxType, DistributedTensorType, Program, PtrType, Return, TensorType, flatten
from plang.ir.enums import NotifyOp, ReduceOp

from ._round_trip import round_trip

HOST = """
    import plang as pl
    import plang.distributed as pld

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(self, data: pld.DistributedTensor[[4, 64], pl.FP32],
                      signal: pld.DistributedTensor[[4], pl.INT32]):
            return data

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(self):
            data_buf = pld.alloc_window_buffer([4, 64], dtype=pl.FP32)
            signal_buf = pld.tensor.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
            data = pld.window(data_buf, [4, 64], dtype=pl.FP32)
            signal = pld.tensor.window(signal_buf, [4], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                self.chip_orch(data, signal, device=r)
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max)
            pld.tensor.barrier(signal)
            return 0
    """


def test_host_orchestration_round_trips_with_the_pld_import():
    prog, text = round_trip(HOST)
    assert "import plang.distributed as pld" in text
    assert "pld.tensor.allreduce(data, signal=signal, op=pld.ReduceOp.Max)" in text
    host = prog.functions["host_orch"]
    assigns = [s for s in host.body.stmts if hasattr(s, "var")]
    assert isinstance(assigns[0].var.type, PtrType)
    assert isinstance(assigns[2].var.type, DistributedTensorType)
    call = next(s.value for s in host.body.stmts if getattr(s, "var", None) is not None
                and s.value.op.name == "pld.tensor.allreduce")
    assert call.kwargs["op"] is ReduceOp.Max
    assert assigns[0].value.args[0].value == 4 * 64 * 4  # the shape form is a byte size


def test_kernel_side_ops_round_trip():
    _, text = round_trip("""
        import plang as pl
        import plang.distributed as pld

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[16, 64], pl.FP32], win: pld.DistributedTensor[[16, 64], pl.FP32],
              signal: pld.DistributedTensor[[1, 4], pl.INT32], peer: pl.Scalar[pl.INT32]):
            ctx: pld.CommCtx = pld.get_comm_ctx(win)
            me = pld.rank(ctx)
            n = pld.system.nranks(ctx)
            t = pld.tile.remote_load(win, peer, [0, 0], [8, 64])
            pld.remote_store(t, win, (me + 1) % n, [8, 0])
            pld.tensor.put(win, peer, x, atomic=pl.AtomicType.Add)
            pld.tensor.get(x, peer, win, [0, 0], [8, 0], [8, 64])
            pld.system.notify(signal, peer, [0, me], 1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(signal, [0, peer], 1, cmp=pld.WaitCmp.Ge)
        """)
    assert "ctx: pld.CommCtx = pld.system.get_comm_ctx(win)" in text
    assert "pld.tile.remote_store(t, win, " in text
    assert "op=pld.NotifyOp.AtomicAdd" in text


def test_distributed_tensor_is_a_tensor_to_tensor_ops():
    prog, _ = round_trip("""
        import plang as pl
        import plang.distributed as pld

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[16, 64], pl.FP32], win: pld.DistributedTensor[[16, 64], pl.FP32, pl.NZ]):
            t = pl.load(x, [0, 0], [16, 64])
            win = pl.store(t, [0, 0], win)
            return win
        """)
    ret = prog.return_types[0]
    assert type(ret) is DistributedTensorType and ret.layout is pl.NZ


def test_a_window_tensor_may_be_returned_where_a_tensor_is_declared():
    """As in the reference: the value keeps its window-bound type, and TypeCheck agrees."""
    from plang.passes.verifiers.type_check import check_types

    prog, _ = round_trip("""
        import plang as pl
        import plang.distributed as pld

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[1, 8], pl.INT32],
              win: pld.DistributedTensor[[1, 8], pl.INT32]) -> pl.Tensor[[1, 8], pl.INT32]:
            win = pl.store(pl.load(x, [0, 0], [1, 8]), [0, 0], win)
            return win
        """)
    ret = [s for s in flatten(prog.body) if isinstance(s, Return)][0]
    assert type(prog.return_types[0]) is TensorType and type(ret.values[0].type) is DistributedTensorType
    check_types(Program("p", [prog]))  # no PassError


def test_collectives_check_their_operands():
    with pytest.raises(pl.ParserTypeError, match="'target' must be a window-bound pld.DistributedTensor"):
        pl.parse(textwrap.dedent("""
            import plang as pl
            import plang.distributed as pld

            @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
            def h(x: pl.Tensor[[64], pl.FP32]):
                pld.tensor.allreduce(x)
            """))
    with pytest.raises(pl.ParserTypeError, match="cmp must be pld.WaitCmp.Ge"):
        pl.parse(textwrap.dedent("""
            import plang as pl
            import plang.distributed as pld

            @pl.function(type=pl.FunctionType.InCore)
            def k(s: pld.DistributedTensor[[4], pl.INT32]):
                pld.system.defer_wait(s, [0], 1, cmp=pld.WaitCmp.Eq)
            """))


def test_running_a_pld_op_outside_a_rank_names_the_distributed_runtime():
    host = torch_codegen(pl.parse(textwrap.dedent(HOST)))  # the HOST function's ops: the rank runtime's
    assert "rt.pld_rank().alloc(" in host and "rt.pld_rank().window(" in host
    assert "rt.dispatch(chip_orch, 'chip_orch', r, (data, signal))" in host
    kernel = pl.parse(textwrap.dedent("""
        import plang as pl
        import plang.distributed as pld

        @pl.function(type=pl.FunctionType.InCore)
        def k(s: pld.DistributedTensor[[4], pl.INT32]):
            pld.system.notify(s, 1, [0], 1, op=pld.NotifyOp.AtomicAdd)
        """))
    assert "rt.pld_rank().notify(" in torch_codegen(kernel)
    with pytest.raises(pl.UnsupportedConstructError, match="run it from a @pl.jit.host orchestrator"):
        run_torch_ref(kernel, torch.zeros(4, dtype=torch.int32))


def test_pld_exports_the_reference_names():
    assert pld.NotifyOp.Set is NotifyOp.Set and isinstance(pld.CommCtx.type, CommCtxType)
    for name in ("alloc_window_buffer", "window", "world_size", "rank", "nranks", "get_comm_ctx",
                 "remote_load", "remote_store"):
        assert callable(getattr(pld, name))
    assert "allgather" in dir(pld.tensor) and "notify" in dir(pld.system)
