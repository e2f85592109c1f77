"""Structured dataflow over (possibly non-SSA) statements, keyed by the original Vars.

- `exposed_reads(s)`: Vars `s` may read before (re)assigning them — upward-exposed uses.
- `must_defs(s)`: Vars bound on every path through `s` (a loop body may not run, so a
  loop contributes only its return vars; an `if` the defs common to both branches).
- `live_after(stmts, live_out)`: for each statement of a sequence, the Vars read later
  before being reassigned (backward liveness).

ConvertToSSA uses these to decide which names a loop carries and which an `if` merges;
results are memoized per statement object in a `Dataflow` instance.
"""

from __future__ import annotations

from ...ir.expr import Var
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
from .var_uses import expr_vars, stmt_exprs


class Dataflow:
    """Memoized exposed-read / must-def facts for the statements of one function."""

    def __init__(self) -> None:
        self._facts: dict[int, tuple[frozenset[Var], frozenset[Var]]] = {}
        self._keep: list[Stmt] = []  # keeps ids stable while memoized

    def exposed_reads(self, s: Stmt) -> frozenset[Var]:
        return self._get(s)[0]

    def must_defs(self, s: Stmt) -> frozenset[Var]:
        return self._get(s)[1]

    def live_after(self, stmts: list[Stmt], live_out: frozenset[Var]) -> list[frozenset[Var]]:
        """`out[i]`: the Vars live right after `stmts[i]`."""
        out: list[frozenset[Var]] = [frozenset()] * len(stmts)
        live = live_out
        for i in range(len(stmts) - 1, -1, -1):
            out[i] = live
            reads, defs = self._get(stmts[i])
            live = reads | (live - defs)
        return out

    def _get(self, s: Stmt) -> tuple[frozenset[Var], frozenset[Var]]:
        key = id(s)
        facts = self._facts.get(key)
        if facts is None:
            facts = self._facts[key] = self._compute(s)
            self._keep.append(s)
        return facts

    def _own_reads(self, s: Stmt) -> set[Var]:
        out: set[Var] = set()
        for e in stmt_exprs(s):
            out.update(expr_vars(e))
        return out

    def _seq(self, stmts: list[Stmt]) -> tuple[frozenset[Var], frozenset[Var]]:
        reads: set[Var] = set()
        defs: set[Var] = set()
        for st in stmts:
            r, d = self._get(st)
            reads |= r - defs
            defs |= d
        return frozenset(reads), frozenset(defs)

    def _compute(self, s: Stmt) -> tuple[frozenset[Var], frozenset[Var]]:
        if isinstance(s, SeqStmts):
            return self._seq(flatten(s))
        if isinstance(s, Assign):
            return frozenset(expr_vars(s.value)), frozenset([s.var])
        if isinstance(s, (Eval, Return, Yield)):
            return frozenset(self._own_reads(s)), frozenset()
        if isinstance(s, If):
            tr, td = self._get(s.then_body)
            er, ed = self._get(s.else_body) if s.else_body is not None else (frozenset(), frozenset())
            return (frozenset(self._own_reads(s) | tr | er),
                    frozenset((td & ed) | set(s.return_vars)))
        if isinstance(s, (For, While)):
            body_reads, _ = self._get(s.body)
            local = set(s.iter_args) | ({s.loop_var} if isinstance(s, For) else set())
            return frozenset((self._own_reads(s) | body_reads) - local), frozenset(s.return_vars)
        if isinstance(s, Scope):
            br, bd = self._get(s.body)
            local = {s.index_var} if s.index_var is not None else set()
            defs = set(bd) | ({s.task_var} if s.task_var is not None else set())
            return frozenset(self._own_reads(s) | (br - local)), frozenset(defs)
        if isinstance(s, SplitAivScope):
            br, bd = self._get(s.body)
            return frozenset(br - {s.lane_var}), bd
        return frozenset(), frozenset()
