"""IRBuilder produces the same IR as direct node construction."""

from __future__ import annotations

import pytest

from plang.dtypes import FP32, INDEX, TASK_ID
from plang.ir import (
    Assign,
    Break,
    ConstInt,
    Eval,
    For,
    ForKind,
    Function,
    FunctionType,
    If,
    IterArg,
    Lt,
    ParamDirection,
    Program,
    Return,
    ScalarType,
    Scope,
    ScopeKind,
    SeqStmts,
    SplitAivScope,
    SplitMode,
    TensorType,
    Var,
    While,
    Yield,
)
from plang.ir.builder import IRBuilder
from plang.ir.equality import assert_structural_equal
from plang.ir.ops import make_call

IDX = ScalarType(INDEX)
T16 = TensorType([16], FP32)


def test_function_with_loop_and_if_matches_hand_built_ir():
    b = IRBuilder()
    with b.function("f", type=FunctionType.InCore) as f:
        a = f.param("a", T16)
        f.param("out", T16, ParamDirection.Out)
        t = b.let("t", make_call("tensor.add", [a, a]))
        with b.for_range("i", 0, 4, iter_args=[("acc", t)], kind=ForKind.Unroll) as lp:
            with b.if_(Lt(lp.var, ConstInt(2)), returns=[("r", T16)]) as br:
                with br.then_():
                    b.yield_(lp.iter_args[0])
                with br.else_():
                    b.yield_(a)
            b.yield_(br.return_vars[0])
        b.ret(lp.return_vars[0])

    a2, out2 = Var("a", T16), Var("out", T16)
    t2 = Var("t", T16)
    i2, acc2, res2, r2 = Var("i", IDX), IterArg("acc", T16, t2), Var("acc", T16), Var("r", T16)
    body = SeqStmts([
        Assign(t2, make_call("tensor.add", [a2, a2])),
        For(i2, ConstInt(0), ConstInt(4), ConstInt(1),
            SeqStmts([If(Lt(i2, ConstInt(2)), Yield([acc2]), Yield([a2]), [r2]), Yield([r2])]),
            [acc2], [res2], ForKind.Unroll),
        Return([res2]),
    ])
    expected = Function("f", [a2, out2], [ParamDirection.In, ParamDirection.Out], [T16], body,
                        FunctionType.InCore)
    assert_structural_equal(f.function, expected)
    assert f.function.return_types == (t.type,)


def test_program_while_scopes_and_split():
    b = IRBuilder()
    with b.program("P") as p:
        with b.function("g", return_types=[]) as g:
            n = g.param("n", IDX)
            with b.while_([("k", ConstInt(0))]) as w:
                w.set_cond(Lt(w.iter_args[0], n))
                b.yield_(w.iter_args[0])
            with b.scope(ScopeKind.InCore, {"split": SplitMode.UP_DOWN}, task_var="tid") as sc:
                with b.split_aiv(SplitMode.UP_DOWN) as lane:
                    b.eval(lane)
                    b.break_()
        with b.function("h"):
            pass
    prog = p.program
    assert isinstance(prog, Program) and list(prog.functions) == ["g", "h"]
    loop, scope = prog.functions["g"].body.stmts
    assert isinstance(loop, While) and loop.return_vars[0].name == "k"
    assert isinstance(scope, Scope) and scope.task_var is sc.task_var
    assert scope.task_var.type.dtype is TASK_ID
    split = scope.body
    assert isinstance(split, SplitAivScope) and split.lane_var.name == "lane"
    assert isinstance(split.body.stmts[0], Eval) and isinstance(split.body.stmts[1], Break)
    assert prog.functions["h"].body.stmts == ()


def test_builder_errors_are_clear():
    b = IRBuilder()
    with pytest.raises(RuntimeError, match="no open block"):
        b.ret()
    with pytest.raises(ValueError, match="without a condition"):
        with b.function("f"):
            with b.while_([("k", ConstInt(0))]):
                pass
    with pytest.raises(ValueError, match="2 iter args but 1 return names"):
        with b.function("f"):
            with b.for_range("i", 0, 2, iter_args=[("a", ConstInt(0)), ("b", ConstInt(1))],
                             return_names=["x"]):
                pass
