"""Simplify: fold scalar and shape arithmetic, propagate constant, copy and tuple-of-atoms bindings, fold
branches on constant conditions and zero-trip loops, and remove dead pure bindings.

Runs on SSA IR. A binding `n = 64` (or `b = a`) is dropped and its uses replaced; op calls
whose operands changed are re-typed, and a variable whose declared shape mentions a
propagated value gets a fresh Var with the folded shape. A binding (or an evaluated
expression) is dead when nothing reads its variable — not even a shape — and its value is
pure (no call of a program function, no op that writes memory, syncs or talks to pipes:
`op.facts.pure`).
"""

from __future__ import annotations

from collections import Counter

from ..ir.expr import Call, Expr, GlobalVar, IterArg, MakeTuple, Var
from ..ir.function import Function, Program
from ..ir.ops.registry import Op
from ..ir.stmt import (
    Assign,
    Eval,
    For,
    If,
    Return,
    Scope,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    flatten,
    seq,
)
from ..ir.types import ShapedType, TensorType, TileType, TupleType, Type
from .analysis.const_eval import CONSTANTS, const_int, const_value, fold
from .analysis.retype import retype_call, types_equal
from .analysis.var_rewrite import VarRewriter
from .analysis.var_uses import expr_vars, shape_vars, stmt_defs, stmt_exprs, walk_expr, walk_stmts
from .framework import FunctionPass, register_pass

ATOMIC = (*CONSTANTS, Var)


def is_pure(e: Expr) -> bool:
    """No call of a program function and no op with side effects anywhere in `e`."""
    impure = []

    def visit(x: Expr) -> None:
        if isinstance(x, Call) and (isinstance(x.op, GlobalVar) or
                                    isinstance(x.op, Op) and not x.op.facts.pure):
            impure.append(x)

    walk_expr(e, visit)
    return not impure


def _propagatable(e: Expr) -> bool:
    """A constant, a variable, or a tuple of them: free to substitute at every use."""
    if isinstance(e, MakeTuple):
        return all(isinstance(x, ATOMIC) for x in e.elements)
    return isinstance(e, ATOMIC)


class _Folder(VarRewriter):
    """Substitutes propagated bindings, folds bottom-up and re-types changed op calls."""

    def expr(self, e: Expr) -> Expr:
        new = super().expr(e)
        if new is not e and isinstance(new, Call) and isinstance(new.op, Op):
            new = retype_call(new)
        return fold(new)

    def type(self, t: Type) -> Type:
        if isinstance(t, TupleType):
            types = tuple(self.type(x) for x in t.types)
            return t if all(a is b for a, b in zip(types, t.types)) else TupleType(types)
        if not isinstance(t, ShapedType):
            return t
        shape = tuple(self.expr(d) for d in t.shape)
        valid = getattr(t, "valid_shape", None)
        new_valid = None if valid is None else tuple(self.expr(d) for d in valid)
        if all(a is b for a, b in zip(shape, t.shape)) and (valid is None or all(
                a is b for a, b in zip(new_valid, valid))):
            return t
        if isinstance(t, TensorType):
            return TensorType(shape, t.dtype, t.layout)
        assert isinstance(t, TileType)
        return TileType(shape, t.dtype, t.memory_space, new_valid)


@register_pass
class Simplify(FunctionPass):
    name = "Simplify"
    required = frozenset({"SSAForm"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        self.folder = _Folder()
        body = seq(self.block(fn.body))
        body = _remove_dead_bindings(body, fn)
        return fn.replace(body=body)

    def block(self, s: Stmt | None) -> list[Stmt]:
        out: list[Stmt] = []
        for st in flatten(s):
            out.extend(self.stmt(st))
        return out

    def var(self, v: Var) -> Var:
        """`v`, or a fresh Var when its type mentions a propagated value."""
        t = self.folder.type(v.type)
        if t is v.type:
            return v
        new = Var(v.name, t, v.span)
        self.folder.mapping[v] = new
        return new

    def stmt(self, s: Stmt) -> list[Stmt]:
        f = self.folder
        if isinstance(s, Assign):
            value = f.expr(s.value)
            if _propagatable(value) and types_equal(value.type, s.var.type):
                f.mapping[s.var] = value
                return []
            return [s.replace(var=self.var(s.var), value=value)]
        if isinstance(s, Eval):
            e = f.expr(s.expr)
            return [] if is_pure(e) else [s.replace(expr=e)]
        if isinstance(s, (Return, Yield)):
            return [s.replace(values=tuple(f.expr(v) for v in s.values))]
        if isinstance(s, If):
            return self.if_(s)
        if isinstance(s, For):
            return self.for_(s)
        if isinstance(s, While):
            iter_args = self.iter_args(s.iter_args)
            return [s.replace(iter_args=iter_args, cond=f.expr(s.cond), body=seq(self.block(s.body)),
                              return_vars=tuple(self.var(v) for v in s.return_vars))]
        if isinstance(s, Scope):
            return [s.replace(attrs=f.value(s.attrs), body=seq(self.block(s.body)))]
        if isinstance(s, SplitAivScope):
            return [s.replace(body=seq(self.block(s.body)))]
        return [s]

    def iter_args(self, args: tuple[IterArg, ...]) -> tuple[IterArg, ...]:
        out = []
        for a in args:
            init, t = self.folder.expr(a.init), self.folder.type(a.type)
            new = a if init is a.init and t is a.type else IterArg(a.name, t, init, a.span)
            self.folder.mapping[a] = new
            out.append(new)
        return tuple(out)

    def if_(self, s: If) -> list[Stmt]:
        cond = self.folder.expr(s.cond)
        taken = const_value(cond)
        if taken is None:
            return [s.replace(cond=cond, then_body=seq(self.block(s.then_body)),
                              else_body=None if s.else_body is None else seq(self.block(s.else_body)),
                              return_vars=tuple(self.var(v) for v in s.return_vars))]
        stmts = self.block(s.then_body if taken else s.else_body)
        values = stmts.pop().values if stmts and isinstance(stmts[-1], Yield) else ()
        return stmts + self.bind_results(s.return_vars, values, s)

    def bind_results(self, targets, values, s: Stmt) -> list[Stmt]:
        out: list[Stmt] = []
        for rv, value in zip(targets, values):
            if isinstance(value, ATOMIC) and types_equal(value.type, rv.type):
                self.folder.mapping[rv] = value
            else:
                out.append(Assign(self.var(rv), value, s.span))
        return out

    def for_(self, s: For) -> list[Stmt]:
        f = self.folder
        start, stop, step = f.expr(s.start), f.expr(s.stop), f.expr(s.step)
        iter_args = self.iter_args(s.iter_args)
        bounds = [const_int(x) for x in (start, stop, step)]
        if None not in bounds and bounds[2] > 0 and bounds[0] >= bounds[1]:
            return self.bind_results(s.return_vars, [a.init for a in iter_args], s)
        return [s.replace(start=start, stop=stop, step=step, attrs=f.value(s.attrs), iter_args=iter_args,
                          body=seq(self.block(s.body)),
                          return_vars=tuple(self.var(v) for v in s.return_vars))]


def _remove_dead_bindings(body: Stmt, fn: Function) -> Stmt:
    """Drop dead pure bindings, and loops / ifs left without effect, to a fixpoint."""
    while True:
        used: Counter[Var] = Counter()
        binders: list[Var] = []
        for st in walk_stmts(body):
            for e in stmt_exprs(st):
                used.update(expr_vars(e))
            binders.extend(stmt_defs(st))
        used.update(shape_vars([v.type for v in binders] + list(fn.return_types)))
        dead = {id(st) for st in walk_stmts(body)
                if isinstance(st, Assign) and not used[st.var] and is_pure(st.value)}
        new = _drop(body, dead)
        if new is body:
            return body
        body = new


def _drop(s: Stmt, dead: set[int]) -> Stmt:
    """`s` without the statements in `dead` and without empty value-less loops / ifs."""
    stmts = flatten(s)
    out = []
    for x in stmts:
        if id(x) in dead:
            continue
        changes = {f: _drop(v, dead) for f, v in x.fields() if isinstance(v, Stmt)}
        changes = {f: v for f, v in changes.items() if v is not getattr(x, f)}
        x = x.replace(**changes) if changes else x
        if _without_effect(x):
            continue
        out.append(x)
    if len(out) == len(stmts) and all(a is b for a, b in zip(out, stmts)):
        return s
    return seq(out)


def _without_effect(s: Stmt) -> bool:
    if isinstance(s, (For, While)):
        return not s.return_vars and not flatten(s.body)
    if isinstance(s, If):
        return not s.return_vars and not flatten(s.then_body) and not flatten(s.else_body)
    return False
