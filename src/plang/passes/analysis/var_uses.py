"""Where variables are defined and used: the facts outlining, splitting and verifiers share.

Types are not walked: a dynamic dim `Var` inside a shape is program-global (a `pl.dynamic`
line), never a captured value. Everything else that can hold an expression is: call
args and kwargs, loop bounds, iter-arg inits, scope attrs.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ...ir.expr import Call, Expr, Var
from ...ir.node import Node
from ...ir.stmt import Assign, Eval, For, If, Return, Scope, SeqStmts, SplitAivScope, Stmt, While, Yield
from ...ir.types import Type


def expr_children(value: Any) -> Iterator[Expr]:
    """The expressions held directly by a field value (an Expr, a tuple, an attrs mapping)."""
    if isinstance(value, Expr):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from expr_children(v)
    elif hasattr(value, "values") and not isinstance(value, (Node, str)):
        for v in value.values():
            yield from expr_children(v)


def walk_expr(e: Expr, visit: Callable[[Expr], None]) -> None:
    """Call `visit` on `e` and every sub-expression (pre-order, types skipped)."""
    visit(e)
    if isinstance(e, Var):
        return
    for name in e._fields:
        if name == "type":
            continue
        for child in expr_children(getattr(e, name)):
            walk_expr(child, visit)


def expr_vars(e: Expr) -> list[Var]:
    """Vars referenced by `e`, in first-use order."""
    out: dict[Var, None] = {}

    def visit(x: Expr) -> None:
        if isinstance(x, Var):
            out.setdefault(x)

    walk_expr(e, visit)
    return list(out)


def stmt_exprs(s: Stmt) -> Iterator[Expr]:
    """The expressions a statement evaluates itself (not those of nested statements)."""
    if isinstance(s, Assign):
        yield s.value
    elif isinstance(s, Eval):
        yield s.expr
    elif isinstance(s, (Yield, Return)):
        yield from s.values
    elif isinstance(s, If):
        yield s.cond
    elif isinstance(s, For):
        yield from (s.start, s.stop, s.step)
        yield from (a.init for a in s.iter_args)
        yield from expr_children(dict(s.attrs))
    elif isinstance(s, While):
        yield from (a.init for a in s.iter_args)
        yield s.cond
    elif isinstance(s, Scope):
        yield from expr_children(dict(s.attrs))


def child_stmts(s: Stmt) -> list[Stmt]:
    if isinstance(s, SeqStmts):
        return list(s.stmts)
    if isinstance(s, If):
        return [s.then_body] + ([s.else_body] if s.else_body is not None else [])
    if isinstance(s, (For, While, Scope, SplitAivScope)):
        return [s.body]
    return []


def stmt_defs(s: Stmt) -> list[Var]:
    """Vars a statement binds itself (not those bound by nested statements)."""
    if isinstance(s, Assign):
        return [s.var]
    if isinstance(s, For):
        return [s.loop_var, *s.iter_args, *s.return_vars]
    if isinstance(s, While):
        return [*s.iter_args, *s.return_vars]
    if isinstance(s, If):
        return list(s.return_vars)
    if isinstance(s, Scope):
        return [v for v in (s.task_var, s.index_var) if v is not None]
    if isinstance(s, SplitAivScope):
        return [s.lane_var]
    return []


def walk_stmts(s: Stmt) -> Iterator[Stmt]:
    """`s` and every nested statement, pre-order."""
    yield s
    for c in child_stmts(s):
        yield from walk_stmts(c)


def defined_vars(s: Stmt) -> dict[Var, None]:
    """Every Var bound anywhere inside `s` (ordered set)."""
    out: dict[Var, None] = {}
    for st in walk_stmts(s):
        for v in stmt_defs(st):
            out.setdefault(v)
    return out


def used_vars(s: Stmt) -> dict[Var, None]:
    """Every Var read anywhere inside `s`, first-use order (ordered set)."""
    out: dict[Var, None] = {}
    for st in walk_stmts(s):
        for e in stmt_exprs(st):
            for v in expr_vars(e):
                out.setdefault(v)
    return out


def free_vars(s: Stmt) -> list[Var]:
    """Vars read inside `s` but bound outside it, in first-use order."""
    defined = defined_vars(s)
    return [v for v in used_vars(s) if v not in defined]


def shape_vars(types: list[Type]) -> set[Var]:
    """Dynamic-dim Vars appearing in the shapes of `types`."""
    out: set[Var] = set()
    for t in types:
        for d in getattr(t, "shape", ()) or ():
            for v in expr_vars(d):
                out.add(v)
    return out


def calls_in(s: Stmt) -> Iterator[Call]:
    """Every Call evaluated anywhere inside `s`."""
    found: list[Call] = []

    def visit(x: Expr) -> None:
        if isinstance(x, Call):
            found.append(x)

    for st in walk_stmts(s):
        for e in stmt_exprs(st):
            walk_expr(e, visit)
    return iter(found)
