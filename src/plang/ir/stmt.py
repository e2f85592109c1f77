"""IR statements: bindings, structured control flow, scopes and AIV-split regions."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .enums import ForKind, ScopeKind, SplitMode
from .expr import Expr, IterArg, Var
from .node import Node, freeze_attrs
from .span import Span


class Stmt(Node):
    __slots__ = ()


class Assign(Stmt):
    """`var = value`."""

    __slots__ = ("var", "value")
    _fields = ("var", "value")

    def __init__(self, var: Var, value: Expr, span: Span | None = None) -> None:
        self._set(span, var=var, value=value)


class Eval(Stmt):
    """An expression evaluated for its effect."""

    __slots__ = ("expr",)
    _fields = ("expr",)

    def __init__(self, expr: Expr, span: Span | None = None) -> None:
        self._set(span, expr=expr)


class SeqStmts(Stmt):
    __slots__ = ("stmts",)
    _fields = ("stmts",)

    def __init__(self, stmts: Sequence[Stmt], span: Span | None = None) -> None:
        self._set(span, stmts=tuple(stmts))


class If(Stmt):
    """`if cond: then_body else: else_body`; `return_vars` receive the branches' yields."""

    __slots__ = ("cond", "then_body", "else_body", "return_vars")
    _fields = ("cond", "then_body", "else_body", "return_vars")

    def __init__(self, cond: Expr, then_body: Stmt, else_body: Stmt | None = None,
                 return_vars: Sequence[Var] = (), span: Span | None = None) -> None:
        self._set(span, cond=cond, then_body=then_body, else_body=else_body,
                  return_vars=tuple(return_vars))


class For(Stmt):
    """A counted loop. `iter_args` are carried; the body's `Yield` feeds the next iteration
    and the final values bind `return_vars`. `attrs` holds kind-specific data (e.g. stage)."""

    __slots__ = ("loop_var", "start", "stop", "step", "iter_args", "body", "return_vars",
                 "kind", "attrs")
    _fields = __slots__

    def __init__(self, loop_var: Var, start: Expr, stop: Expr, step: Expr, body: Stmt,
                 iter_args: Sequence[IterArg] = (), return_vars: Sequence[Var] = (),
                 kind: ForKind = ForKind.Sequential, attrs: Mapping[str, Any] | None = None,
                 span: Span | None = None) -> None:
        self._set(span, loop_var=loop_var, start=start, stop=stop, step=step,
                  iter_args=tuple(iter_args), body=body, return_vars=tuple(return_vars),
                  kind=kind, attrs=freeze_attrs(attrs))


class While(Stmt):
    """`for (..) in pl.while_(init_values=..)`: `cond` is evaluated before every iteration
    over the iter args; `return_vars` take their final values."""

    __slots__ = ("cond", "iter_args", "body", "return_vars")
    _fields = __slots__

    def __init__(self, cond: Expr, iter_args: Sequence[IterArg], body: Stmt,
                 return_vars: Sequence[Var] = (), span: Span | None = None) -> None:
        self._set(span, cond=cond, iter_args=tuple(iter_args), body=body,
                  return_vars=tuple(return_vars))


class Yield(Stmt):
    __slots__ = ("values",)
    _fields = ("values",)

    def __init__(self, values: Sequence[Expr] = (), span: Span | None = None) -> None:
        self._set(span, values=tuple(values))


class Return(Stmt):
    __slots__ = ("values",)
    _fields = ("values",)

    def __init__(self, values: Sequence[Expr] = (), span: Span | None = None) -> None:
        self._set(span, values=tuple(values))


class Break(Stmt):
    __slots__ = ()

    def __init__(self, span: Span | None = None) -> None:
        self._set(span)


class Continue(Stmt):
    __slots__ = ()

    def __init__(self, span: Span | None = None) -> None:
        self._set(span)


class Scope(Stmt):
    """A region with execution meaning: InCore (`pl.at(CORE_GROUP)`), Cluster, Spmd,
    Hierarchy (`pl.at(HOST..)`), Runtime (`pl.scope` / `manual_scope`) or Graph.

    `attrs` carries level, role, split, core_num, sync_start, mode, deps, name_hint, ...
    (values are plain Python values, Exprs, or tuples of them);
    `task_var` binds the scope's TaskId (`with ... as tid`) when present;
    `index_var` binds the block index of the loop form `for i in pl.spmd(n)`.
    """

    __slots__ = ("kind", "body", "attrs", "task_var", "index_var")
    _fields = __slots__

    def __init__(self, kind: ScopeKind, body: Stmt, attrs: Mapping[str, Any] | None = None,
                 task_var: Var | None = None, index_var: Var | None = None,
                 span: Span | None = None) -> None:
        self._set(span, kind=kind, body=body, attrs=freeze_attrs(attrs), task_var=task_var,
                  index_var=index_var)


class SplitAivScope(Stmt):
    """`for lane in pl.split_aiv(2, mode=...)`: the body runs per AIV lane."""

    __slots__ = ("mode", "lane_var", "body")
    _fields = __slots__

    def __init__(self, mode: SplitMode, lane_var: Var, body: Stmt, span: Span | None = None) -> None:
        self._set(span, mode=mode, lane_var=lane_var, body=body)


def flatten(stmt: Stmt | None) -> list[Stmt]:
    """The statements of `stmt`, splicing nested `SeqStmts`."""
    if stmt is None:
        return []
    if isinstance(stmt, SeqStmts):
        out: list[Stmt] = []
        for s in stmt.stmts:
            out.extend(flatten(s))
        return out
    return [stmt]


def seq(stmts: Sequence[Stmt], span: Span | None = None) -> Stmt:
    """One statement for a list: the statement itself when there is just one."""
    flat: list[Stmt] = []
    for s in stmts:
        flat.extend(flatten(s))
    return flat[0] if len(flat) == 1 else SeqStmts(flat, span)
