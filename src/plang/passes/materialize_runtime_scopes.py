"""MaterializeRuntimeScopes: make the runtime scopes of orchestration code explicit.

With `auto_scope=True` (the default) an AUTO runtime scope (`with pl.scope():`) wraps the
body of every Orchestration function and the body of each `for` / `if` in it, leaving the
trailing `return` / `pl.yield_` outside so the scope only delimits the tasks submitted.
Scopes the author wrote are kept, and nothing is inserted inside a `pl.manual_scope()`.
With `auto_scope=False` the function keeps exactly the scopes the author wrote.
"""

from __future__ import annotations

from ..ir.enums import FunctionType, ScopeKind, ScopeMode
from ..ir.function import Function, Program
from ..ir.stmt import For, If, Return, Scope, SeqStmts, Stmt, While, Yield, flatten, seq
from .analysis.var_uses import walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property

AUTO = {"mode": ScopeMode.AUTO}


def _is_runtime(s: Stmt) -> bool:
    return isinstance(s, Scope) and s.kind is ScopeKind.Runtime


def _is_manual(s: Stmt) -> bool:
    return _is_runtime(s) and s.attrs.get("mode") is ScopeMode.MANUAL


def wrap(body: Stmt) -> Stmt:
    """`body` inside an AUTO scope (trailing return / yield kept outside), nested bodies too."""
    stmts = [_nested(s) for s in flatten(body)]
    tail = [stmts.pop()] if stmts and isinstance(stmts[-1], (Return, Yield)) else []
    if not stmts or (len(stmts) == 1 and _is_runtime(stmts[0])):
        return seq(stmts + tail, body.span) if stmts or tail else body
    return seq([Scope(ScopeKind.Runtime, seq(stmts, body.span), AUTO, span=body.span), *tail], body.span)


def _nested(s: Stmt) -> Stmt:
    if _is_manual(s):
        return s
    if isinstance(s, If):
        return s.replace(then_body=wrap(s.then_body),
                         else_body=None if s.else_body is None else wrap(s.else_body))
    if isinstance(s, (For, While)):
        return s.replace(body=wrap(s.body))
    if isinstance(s, Scope):
        return s.replace(body=seq([_nested(x) for x in flatten(s.body)], s.body.span))
    if isinstance(s, SeqStmts):
        return seq([_nested(x) for x in s.stmts], s.span)
    return s


def wants_auto_scope(fn: Function) -> bool:
    return fn.func_type is FunctionType.Orchestration and fn.attrs.get("auto_scope", True) is not False


@register_pass
class MaterializeRuntimeScopes(FunctionPass):
    name = "MaterializeRuntimeScopes"
    required = frozenset({"SplitIncoreOrch"})
    produced = frozenset({"RuntimeScopesMaterialized"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not wants_auto_scope(fn) or _has_auto_body(fn):
            return fn
        return fn.replace(body=wrap(fn.body))


def _has_auto_body(fn: Function) -> bool:
    stmts = flatten(fn.body)
    if stmts and isinstance(stmts[-1], Return):
        stmts = stmts[:-1]
    return len(stmts) == 1 and _is_runtime(stmts[0])


def check_runtime_scopes(program: Program) -> None:
    for fn in program.functions.values():
        if wants_auto_scope(fn) and not _has_auto_body(fn) and any(True for _ in _body_stmts(fn)):
            raise PassError(f"orchestration function {fn.name!r} (auto_scope=True) has no runtime scope "
                            f"around its body", fn.span)


def _body_stmts(fn: Function):
    return (s for s in walk_stmts(fn.body) if not isinstance(s, (SeqStmts, Return)))


register_property("RuntimeScopesMaterialized", check_runtime_scopes,
                  "auto-scoped orchestration bodies are wrapped in AUTO runtime scopes")
