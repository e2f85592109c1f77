"""IR statements: bindings, structured control flow, scopes, AIV-split regions and inline
source."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .enums import ForKind, ScopeKind, SplitMode
from .expr import Expr, IterArg, Var
from .node import Node, node
from .span import Span


class Stmt(Node):
    __slots__ = ()


@node
class Assign(Stmt):
    """`var = value`."""

    var: Var
    value: Expr


@node
class Eval(Stmt):
    """An expression evaluated for its effect."""

    expr: Expr


@node
class SeqStmts(Stmt):
    stmts: tuple[Stmt, ...]


@node
class If(Stmt):
    """`if cond: then_body else: else_body`; `return_vars` receive the branches' yields."""

    cond: Expr
    then_body: Stmt
    else_body: Stmt | None = None
    return_vars: tuple[Var, ...] = ()


@node
class For(Stmt):
    """A counted loop. `iter_args` are carried; the body's `Yield` feeds the next iteration
    and the final values bind `return_vars`. `attrs` holds kind-specific data (e.g. stage)."""

    loop_var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: Stmt
    iter_args: tuple[IterArg, ...] = ()
    return_vars: tuple[Var, ...] = ()
    kind: ForKind = ForKind.Sequential
    attrs: Mapping[str, Any] | None = None


@node
class While(Stmt):
    """`for (..) in pl.while_(init_values=..)`: `cond` is evaluated before every iteration
    over the iter args; `return_vars` take their final values."""

    cond: Expr
    iter_args: tuple[IterArg, ...]
    body: Stmt
    return_vars: tuple[Var, ...] = ()


@node
class Yield(Stmt):
    values: tuple[Expr, ...] = ()


@node
class Return(Stmt):
    values: tuple[Expr, ...] = ()


class Break(Stmt):
    __slots__ = ()


class Continue(Stmt):
    __slots__ = ()


@node
class Scope(Stmt):
    """A region with execution meaning: InCore (`pl.at(CORE_GROUP)`), Cluster, Spmd,
    Hierarchy (`pl.at(HOST..)`), Runtime (`pl.scope` / `manual_scope`) or Graph.

    `attrs` carries level, role, split, core_num, sync_start, mode, deps, name_hint, ...
    (values are plain Python values, Exprs, or tuples of them);
    `task_var` binds the scope's TaskId (`with ... as tid`) when present;
    `index_var` binds the block index of the loop form `for i in pl.spmd(n)`.
    """

    kind: ScopeKind
    body: Stmt
    attrs: Mapping[str, Any] | None = None
    task_var: Var | None = None
    index_var: Var | None = None


@node
class SplitAivScope(Stmt):
    """`for lane in pl.split_aiv(2, mode=...)`: the body runs per AIV lane."""

    mode: SplitMode
    lane_var: Var
    body: Stmt


@node
class InlineStmt(Stmt):
    """Source run as it is: the Python body of a HOST SubWorker (`language` "Python"), which
    the run executes with its parameters bound to the call's tensors and `torch` in scope."""

    body: str
    language: str = "Python"


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


def trailing_yield(stmt: Stmt | None) -> Yield | None:
    """The `Yield` that ends `stmt` (a loop's or a branch's body), if it ends with one."""
    stmts = flatten(stmt)
    return stmts[-1] if stmts and isinstance(stmts[-1], Yield) else None


def seq(stmts: Sequence[Stmt], span: Span | None = None) -> Stmt:
    """One statement for a list: the statement itself when there is just one."""
    flat: list[Stmt] = []
    for s in stmts:
        flat.extend(flatten(s))
    return flat[0] if len(flat) == 1 else SeqStmts(flat, span)
