"""IRVisitor / IRMutator / substitute."""

from __future__ import annotations

from ir_samples import every_statement_program

from plang.dtypes import FP32, INDEX
from plang.ir import (
    Add,
    BinaryExpr,
    Break,
    ConstInt,
    Continue,
    Eval,
    For,
    FunctionType,
    IterArg,
    Lt,
    ScalarType,
    ScopeKind,
    SeqStmts,
    TensorType,
    Var,
    Yield,
    flatten,
)
from plang.ir.builder import IRBuilder
from plang.ir.equality import assert_structural_equal
from plang.ir.ops import make_call
from plang.ir.visitor import IRMutator, IRVisitor, substitute

IDX = ScalarType(INDEX)


class UseDefCounter(IRVisitor):
    def __init__(self):
        self.defs, self.uses, self.binary = [], [], 0

    def visit_def(self, var):
        self.defs.append(var.name)
        if isinstance(var, IterArg):
            self.visit(var.init)
        self.visit(var.type)

    def visit_Var(self, var):
        self.uses.append(var.name)
        super().visit_Var(var)

    def visit_BinaryExpr(self, e):  # catches Add, Lt, ... through the MRO
        self.binary += 1
        self.generic_visit(e)


def test_visitor_sees_defs_uses_types_and_attrs():
    c = UseDefCounter()
    c.visit(every_statement_program())
    assert c.defs[:3] == ["a", "out", "n"]
    assert sorted(c.defs[3:]) == sorted(["t", "i", "acc", "acc", "s", "j", "r", "k", "x", "k", "x", "u",
                                         "x", "y", "lane", "c", "blk", "flag", "tup", "z", "tid"])
    assert "M" in c.uses  # the dynamic dim inside annotated types
    assert "tid" in c.uses  # inside the Spmd scope's deps attr
    assert c.binary == 5  # i < n, n < 8, k < n, k + 1, 2 + 3


def test_visitor_can_skip_types():
    class Uses(IRVisitor):
        visit_types = False

        def __init__(self):
            self.names = []

        def visit_Var(self, var):
            self.names.append(var.name)
    u = Uses()
    u.visit(every_statement_program())
    assert "M" not in u.names and "tid" in u.names


def nested(bound_of):
    """`for i in range(bound): with scope: for j in range(bound): if j < bound: x = bound + j`."""
    b = IRBuilder()
    with b.function("f", type=FunctionType.Orchestration) as f:
        n = f.param("n", IDX)
        bound = bound_of(n)
        with b.for_range("i", 0, bound):
            with b.scope(ScopeKind.Runtime):
                with b.for_range("j", 0, bound) as inner:
                    with b.if_(Lt(inner.var, bound)) as br:
                        with br.then_():
                            b.let("x", Add(bound, inner.var))
        b.ret(bound)
    return f.function


def test_substitute_in_nested_scopes():
    fn = nested(lambda n: n)
    n = fn.params[0]
    out = substitute(fn, {n: ConstInt(16)})
    assert_structural_equal(out, nested(lambda n: ConstInt(16)))
    assert out.params[0] is n  # Var -> Expr entries do not touch binding sites
    assert substitute(fn, {}) is fn


def test_mutator_is_copy_on_write():
    prog = every_statement_program()
    assert IRMutator().visit(prog) is prog

    class Bump(IRMutator):  # 4 -> 40 everywhere
        def visit_ConstInt(self, c):
            return ConstInt(40) if c.value == 4 and c.dtype is INDEX else c

    out = Bump().visit(prog)
    kernel, new_kernel = prog.functions["kernel"], out.functions["kernel"]
    assert out is not prog and new_kernel is not kernel
    assert out.functions["orch"] is prog.functions["orch"]  # no ConstInt 4 there
    old_stmts, new_stmts = flatten(kernel.body), flatten(new_kernel.body)
    assert new_stmts[0] is old_stmts[0]  # the load is untouched
    assert new_stmts[1] is not old_stmts[1] and new_stmts[1].stop.value == 40
    assert new_stmts[1].body is old_stmts[1].body  # the loop body did not change
    assert new_stmts[2:] == old_stmts[2:]
    assert old_stmts[1].stop.value == 4


def test_statement_hooks_remove_and_splice():
    class Rewrite(IRMutator):
        def visit_Break(self, s):
            return None

        def visit_Continue(self, s):
            return SeqStmts([Eval(ConstInt(1)), Eval(ConstInt(2))])

    body = SeqStmts([Break(), Continue(), Eval(ConstInt(3))])
    out = Rewrite().visit(body)
    assert [s.expr.value for s in out.stmts] == [1, 2, 3]
    loop = For(Var("i", IDX), ConstInt(0), ConstInt(2), ConstInt(1), Break())
    new_body = Rewrite().visit(loop).body
    assert isinstance(new_body, SeqStmts) and new_body.stmts == ()


def test_definition_sites_rebuild_vars_whose_type_changes():
    m = Var("M", IDX)
    b = IRBuilder()
    with b.function("f") as f:
        a = f.param("a", TensorType([m, 8], FP32))
        with b.for_range("i", 0, m, iter_args=[("acc", a)]) as lp:
            b.yield_(make_call("tensor.add", [lp.iter_args[0], a]))
        b.ret(lp.return_vars[0])
    fn = f.function
    out = substitute(fn, {m: ConstInt(64)})
    new_a = out.params[0]
    assert new_a is not a and new_a.type.static_shape == (64, 8)
    loop = flatten(out.body)[0]
    assert loop.stop.value == 64
    new_acc = loop.iter_args[0]
    assert new_acc.init is new_a and new_acc.type.static_shape == (64, 8)
    yielded = flatten(loop.body)[0]
    assert isinstance(yielded, Yield) and yielded.values[0].args == (new_acc, new_a)
    assert flatten(out.body)[-1].values[0] is loop.return_vars[0]


def test_substitute_renames_definitions_with_var_entries():
    x, y = Var("x", IDX), Var("y", IDX)
    body = SeqStmts([Eval(Add(x, x))])
    out = substitute(body, {x: y})
    assert out.stmts[0].expr.lhs is y and out.stmts[0].expr.rhs is y


def test_visitor_dispatch_prefers_the_most_specific_hook():
    seen = []

    class V(IRVisitor):
        def visit_Add(self, e):
            seen.append("add")
            self.generic_visit(e)

        def visit_BinaryExpr(self, e):
            seen.append("binary")
            self.generic_visit(e)

    x = Var("x", IDX)
    V().visit(Lt(Add(x, x), x))
    assert seen == ["binary", "add"]
    assert issubclass(Add, BinaryExpr)
