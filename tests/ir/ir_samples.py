"""Hand-built IR programs shared by the IR tests (printer, equality, visitor)."""

from __future__ import annotations

from plang.dtypes import FP32, INDEX, INT32
from plang.ir import (
    Add,
    ConstBool,
    ConstFloat,
    ConstInt,
    ForKind,
    FunctionType,
    Level,
    Lt,
    MakeTuple,
    MemorySpace,
    ParamDirection,
    Role,
    ScalarType,
    ScopeKind,
    ScopeMode,
    SplitMode,
    TensorType,
    Var,
)
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call


def every_statement_program():
    """A program touching every statement kind, scope kind and type annotation."""
    m = Var("M", ScalarType(INDEX))
    b = IRBuilder()
    with b.program("Sample") as prog:
        with b.function("kernel", type=FunctionType.InCore) as f:
            a = f.param("a", TensorType([m, 64], FP32))
            out = f.param("out", TensorType([m, 64], FP32), ParamDirection.Out)
            n = f.param("n", ScalarType(INDEX))
            t = b.let("t", make_call("tile.load", [a, [0, 0], [64, 64]],
                                     {"target_memory": MemorySpace.Vec}))
            with b.for_range("i", 0, 4, iter_args=[("acc", t)]) as loop:
                s = b.let("s", make_call("tile.add", [loop.iter_args[0], t]))
                b.yield_(s)
            with b.for_range("j", 1, n, 2, kind=ForKind.Parallel):
                with b.if_(Lt(loop.var, n)) as br:
                    with br.then_():
                        b.break_()
                    with br.else_():
                        b.continue_()
            with b.if_(Lt(n, ConstInt(8)), returns=[("r", t.type)]) as br:
                with br.then_():
                    b.yield_(loop.return_vars[0])
                with br.else_():
                    b.yield_(t)
            with b.while_([("k", ConstInt(0)), ("x", ConstFloat(0.5))]) as w:
                w.set_cond(Lt(w.iter_args[0], n))
                b.yield_(Add(w.iter_args[0], ConstInt(1)), w.iter_args[1])
            with b.for_range("u", 0, 2, kind=ForKind.Pipeline, attrs={"stage": 2}):
                b.eval(make_call("tile.store", [br.return_vars[0], [0, 0], out]))
            b.ret(out)
        with b.function("orch", type=FunctionType.Orchestration) as g:
            x = g.param("x", TensorType([m, 64], FP32))
            y = g.param("y", TensorType([m, 64], FP32), ParamDirection.InOut)
            with b.scope(ScopeKind.InCore, {"split": SplitMode.UP_DOWN}, task_var="tid") as sc:
                with b.split_aiv(SplitMode.UP_DOWN, "lane"):
                    b.let("c", ConstInt(3, INT32))
            with b.scope(ScopeKind.Runtime, {"mode": ScopeMode.MANUAL}):
                with b.scope(ScopeKind.Spmd, {"core_num": 4, "deps": (sc.task_var,)}, index_var="blk"):
                    b.let("flag", ConstBool(True))
            with b.scope(ScopeKind.Hierarchy, {"level": Level.HOST, "role": Role.Orchestrator}):
                b.let("tup", MakeTuple([x, y]))
            with b.scope(ScopeKind.Cluster):
                b.let("z", Add(ConstInt(2), ConstInt(3)))
            with b.scope(ScopeKind.Graph, {"name": "g"}):
                b.ret(y)
    return prog.program
