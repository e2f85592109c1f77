"""Substitute variables through statements, optionally giving every binding a fresh Var.

`VarRewriter(mapping).stmt(s)` replaces each use of a mapped Var; with `fresh=True` each
Var bound inside `s` is replaced by a new Var of the same name and type (and its uses
follow), which is how a body is cloned (pipeline stages, outlined functions, AIC/AIV
halves) without two definitions sharing one Var. Types follow too: a shape or valid shape
that mentions a replaced Var (a dynamic extent) names its replacement. Unchanged nodes are
shared.
"""

from __future__ import annotations

from typing import Any

from ...ir.expr import Expr, IterArg, Var
from ...ir.node import freeze_attrs
from ...ir.stmt import (
    Assign,
    Eval,
    For,
    If,
    Return,
    Scope,
    SeqStmts,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    flatten,
)
from ...ir.types import ShapedType, TileType, TupleType, Type


class VarRewriter:
    def __init__(self, mapping: dict[Var, Expr] | None = None, fresh: bool = False) -> None:
        self.mapping: dict[Var, Expr] = dict(mapping or {})
        self.fresh = fresh

    # -- expressions -------------------------------------------------------------
    def expr(self, e: Expr) -> Expr:
        if isinstance(e, Var):
            return self.mapping.get(e, e)
        changes = {}
        for name in e._fields:
            old = getattr(e, name)
            new = self.type(old) if name == "type" else self.value(old)
            if new is not old:
                changes[name] = new
        return e.replace(**changes) if changes else e

    def value(self, v: Any) -> Any:
        if isinstance(v, Expr):
            return self.expr(v)
        if isinstance(v, tuple):
            new = tuple(self.value(x) for x in v)
            return v if all(a is b for a, b in zip(new, v)) else new
        if hasattr(v, "items") and not isinstance(v, str):
            new = {k: self.value(x) for k, x in v.items()}
            return v if all(new[k] is x for k, x in v.items()) else freeze_attrs(new)
        return v

    def type(self, t: Type) -> Type:
        """`t` with the mapped Vars in its shape and valid shape substituted."""
        if isinstance(t, TupleType):
            types = tuple(self.type(x) for x in t.types)
            return t if all(a is b for a, b in zip(types, t.types)) else TupleType(types)
        if not isinstance(t, ShapedType) or not self.mapping:
            return t
        changes = {"shape": self.value(t.shape)}
        if isinstance(t, TileType) and t.valid_shape is not None:
            changes["valid_shape"] = self.value(t.valid_shape)
        if all(new is getattr(t, name) for name, new in changes.items()):
            return t
        return t.replace(**changes)

    # -- bindings ---------------------------------------------------------------
    def bind(self, v: Var) -> Var:
        """The Var a definition of `v` binds in the rewritten code."""
        mapped = self.mapping.get(v)
        if not self.fresh and isinstance(mapped, Var):
            return mapped
        t = self.type(v.type)
        if not self.fresh and t is v.type:
            return v
        new = Var(v.name, t, v.span)
        self.mapping[v] = new
        return new

    def bind_iter_arg(self, a: IterArg) -> IterArg:
        init, t = self.expr(a.init), self.type(a.type)
        if self.fresh:
            new = IterArg(a.name, t, init, a.span)
            self.mapping[a] = new
            return new
        mapped = self.mapping.get(a)
        if isinstance(mapped, IterArg):
            return mapped if mapped.init is init else mapped.replace(init=init)
        if init is a.init and t is a.type:
            return a
        new = a.replace(init=init, type=t)
        self.mapping[a] = new
        return new

    # -- statements -------------------------------------------------------------
    def stmt(self, s: Stmt) -> Stmt:
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            return s
        return method(s)

    def body(self, s: Stmt | None) -> Stmt | None:
        return None if s is None else self.stmt(s)

    def stmt_SeqStmts(self, s: SeqStmts) -> Stmt:
        new = [self.stmt(x) for x in s.stmts]
        return s if all(a is b for a, b in zip(new, s.stmts)) else s.replace(stmts=tuple(new))

    def stmt_Assign(self, s: Assign) -> Stmt:
        value = self.expr(s.value)
        var = self.bind(s.var)
        return s if var is s.var and value is s.value else s.replace(var=var, value=value)

    def stmt_Eval(self, s: Eval) -> Stmt:
        e = self.expr(s.expr)
        return s if e is s.expr else s.replace(expr=e)

    def stmt_Yield(self, s: Yield) -> Stmt:
        return self._values(s)

    def stmt_Return(self, s: Return) -> Stmt:
        return self._values(s)

    def _values(self, s: Yield | Return) -> Stmt:
        vals = tuple(self.expr(v) for v in s.values)
        return s if all(a is b for a, b in zip(vals, s.values)) else s.replace(values=vals)

    def stmt_If(self, s: If) -> Stmt:
        cond = self.expr(s.cond)
        then_body = self.stmt(s.then_body)
        else_body = self.body(s.else_body)
        rvs = tuple(self.bind(v) for v in s.return_vars)
        return s.replace(cond=cond, then_body=then_body, else_body=else_body, return_vars=rvs)

    def stmt_For(self, s: For) -> Stmt:
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        attrs = self.value(s.attrs)
        iter_args = tuple(self.bind_iter_arg(a) for a in s.iter_args)
        loop_var = self.bind(s.loop_var)
        body = self.stmt(s.body)
        rvs = tuple(self.bind(v) for v in s.return_vars)
        return s.replace(loop_var=loop_var, start=start, stop=stop, step=step, attrs=attrs,
                         iter_args=iter_args, body=body, return_vars=rvs)

    def stmt_While(self, s: While) -> Stmt:
        iter_args = tuple(self.bind_iter_arg(a) for a in s.iter_args)
        cond = self.expr(s.cond)
        body = self.stmt(s.body)
        rvs = tuple(self.bind(v) for v in s.return_vars)
        return s.replace(cond=cond, iter_args=iter_args, body=body, return_vars=rvs)

    def stmt_Scope(self, s: Scope) -> Stmt:
        attrs = self.value(s.attrs)
        task_var = None if s.task_var is None else self.bind(s.task_var)
        index_var = None if s.index_var is None else self.bind(s.index_var)
        body = self.stmt(s.body)
        return s.replace(attrs=attrs, task_var=task_var, index_var=index_var, body=body)

    def stmt_SplitAivScope(self, s: SplitAivScope) -> Stmt:
        lane = self.bind(s.lane_var)
        body = self.stmt(s.body)
        return s.replace(lane_var=lane, body=body)


def substitute(s: Stmt, mapping: dict[Var, Expr]) -> Stmt:
    """`s` with every use of a mapped Var replaced."""
    return VarRewriter(mapping).stmt(s)


def clone_fresh(s: Stmt, mapping: dict[Var, Expr] | None = None) -> tuple[Stmt, dict[Var, Expr]]:
    """A copy of `s` in which every binding is a new Var; returns it and the full mapping."""
    r = VarRewriter(mapping, fresh=True)
    return r.stmt(s), r.mapping


def block(s: Stmt) -> SeqStmts:
    """`s` as a `SeqStmts` (so per-block rewriting sees a single statement body too)."""
    return s if isinstance(s, SeqStmts) else SeqStmts(flatten(s), s.span)


def with_block_bodies(s: Stmt) -> Stmt:
    """A loop / branch / scope with every body a `SeqStmts`."""
    if isinstance(s, If):
        return s.replace(then_body=block(s.then_body),
                         else_body=None if s.else_body is None else block(s.else_body))
    if isinstance(s, (For, While, Scope, SplitAivScope)):
        return s.replace(body=block(s.body))
    return s
