"""UseAfterDef: every use of a variable is dominated by its definition.

Scoping follows structured dominance: a value bound inside an `if` branch or a loop body
is visible only there (it leaves through return vars); a `Scope` / `split_aiv` body is not
value-returning, so what it binds stays visible after it, as does a scope's task id.
Dynamic dims (Vars inside the shapes of the function's types) are always defined.
"""

from __future__ import annotations

from ...ir.expr import Expr, Var
from ...ir.function import Function, Program
from ...ir.stmt import For, If, Scope, SeqStmts, SplitAivScope, Stmt, While
from ..analysis.var_uses import defined_vars, expr_vars, shape_vars, stmt_defs, stmt_exprs
from ..diagnostics import PassError
from ..framework import define_verifier


def check_use_after_def(program: Program) -> None:
    for fn in program.functions.values():
        _FunctionCheck(fn).run()


class _FunctionCheck:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.bound_somewhere = defined_vars(fn.body)
        types = [p.type for p in fn.params] + list(fn.return_types) + [v.type for v in self.bound_somewhere]
        self.symbolic = shape_vars(types)

    def run(self) -> None:
        self.block(self.fn.body, set(self.fn.params))

    def uses(self, s: Stmt, defined: set[Var]) -> None:
        for e in stmt_exprs(s):
            self._check_expr(e, s, defined)

    def message(self, v: Var) -> str:
        where = "it is never defined"
        if v in self.bound_somewhere:
            where = "its definition does not dominate this use (it is bound only inside a branch, " \
                    "a loop body, or later)"
        return f"variable '{v.name}' is used before it is defined in function '{self.fn.name}': {where}"

    def block(self, s: Stmt, defined: set[Var]) -> set[Var]:
        """Check `s` with `defined` in scope; returns `defined` plus what `s` exports."""
        if isinstance(s, SeqStmts):
            for st in s.stmts:
                defined = self.block(st, defined)
            return defined
        if isinstance(s, If):
            self.uses(s, defined)
            self.block(s.then_body, set(defined))
            if s.else_body is not None:
                self.block(s.else_body, set(defined))
            return defined | set(s.return_vars)
        if isinstance(s, (For, While)):
            local = set(s.iter_args) | ({s.loop_var} if isinstance(s, For) else set())
            if isinstance(s, While):  # the condition reads the iter args
                for a in s.iter_args:
                    self._check_expr(a.init, s, defined)
                self._check_expr(s.cond, s, defined | local)
            else:
                self.uses(s, defined)
            self.block(s.body, defined | local)
            return defined | set(s.return_vars)
        if isinstance(s, Scope):
            self.uses(s, defined)
            inner = defined | ({s.index_var} if s.index_var is not None else set())
            out = self.block(s.body, inner)
            out.discard(s.index_var)
            return out | ({s.task_var} if s.task_var is not None else set())
        if isinstance(s, SplitAivScope):
            out = self.block(s.body, defined | {s.lane_var})
            out.discard(s.lane_var)
            return out
        self.uses(s, defined)
        return defined | set(stmt_defs(s))

    def _check_expr(self, e: Expr, s: Stmt, defined: set[Var]) -> None:
        for v in expr_vars(e):
            if v not in defined and v not in self.symbolic:
                raise PassError(self.message(v), s.span)


UseAfterDef = define_verifier("UseAfterDef", check_use_after_def,
                              "Every use of a variable is dominated by its definition.")
