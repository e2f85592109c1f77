"""OrchestrationReferencesResolved: every call of a program function names a function of
the program with as many parameters as the call passes, no function calls itself (directly
or through others: a program cannot recurse), and host-side code (outside any core region)
uses no tile op: tiles exist only inside core functions."""

from __future__ import annotations

from ...ir.enums import ScopeKind
from ...ir.expr import Call, GlobalVar
from ...ir.function import Program
from ...ir.ops.registry import Op
from ...ir.span import Span
from ...ir.stmt import Scope, SplitAivScope, Stmt
from ..analysis.var_uses import child_stmts, stmt_exprs, walk_expr
from ..diagnostics import PassError
from ..framework import define_verifier

CORE_SCOPES = (ScopeKind.InCore, ScopeKind.Spmd)


def check_references(program: Program) -> None:
    calls: dict[str, dict[str, Span]] = {}
    for fn in program.functions.values():
        host = not fn.func_type.is_core
        _check(fn.body, fn.name, program, host, calls.setdefault(fn.name, {}))
    _check_acyclic(calls)


def _check_acyclic(calls: dict[str, dict[str, Span]]) -> None:
    """Raise at the call closing the first cycle of the call graph `calls` (caller -> callee -> span)."""
    done: set[str] = set()
    path: list[str] = []

    def visit(n: str) -> None:
        path.append(n)
        for callee, span in calls.get(n, {}).items():
            if callee in path:
                cycle = " -> ".join([*path[path.index(callee):], callee])
                raise PassError(f"{callee!r} is called recursively ({cycle}); program functions cannot "
                                "recurse", span)
            if callee not in done:
                visit(callee)
        path.pop()
        done.add(n)

    for n in calls:
        if n not in done:
            visit(n)


def _check(s: Stmt, fname: str, program: Program, host: bool, callees: dict[str, Span]) -> None:
    if isinstance(s, SplitAivScope) or (isinstance(s, Scope) and s.kind in CORE_SCOPES):
        host = False

    def visit(e) -> None:
        if not isinstance(e, Call):
            return
        if isinstance(e.op, GlobalVar):
            callee = program.functions.get(e.op.name)
            if callee is None:
                raise PassError(f"{fname!r} calls {e.op.name!r}, which is not a function of program "
                                f"{program.name!r}", e.span)
            if len(callee.params) != len(e.args):
                raise PassError(f"{fname!r} calls {callee.name!r} with {len(e.args)} arguments; it takes "
                                f"{len(callee.params)}", e.span)
            callees.setdefault(callee.name, e.span)
        elif host and isinstance(e.op, Op) and e.op.namespace == "tile":
            raise PassError(f"tile op {e.op.name} in host-side function {fname!r}: tile ops run only inside "
                            f"core functions", e.span)

    for e in stmt_exprs(s):
        walk_expr(e, visit)
    for c in child_stmts(s):
        _check(c, fname, program, host, callees)


OrchestrationReferencesResolved = define_verifier(
    "OrchestrationReferencesResolved", check_references,
    "Calls name existing functions with matching arity; host code uses no tile ops.")
