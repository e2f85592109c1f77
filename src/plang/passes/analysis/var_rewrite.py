"""Substitute variables through statements, optionally giving every binding a fresh Var.

`VarRewriter(mapping).stmt(s)` replaces each use of a mapped Var; with `fresh=True` each
Var bound inside `s` is replaced by a new Var of the same name and type (and its uses
follow), which is how a body is cloned (pipeline stages, outlined functions, AIC/AIV
halves) without two definitions sharing one Var. Types follow too: a shape or valid shape
that mentions a replaced Var (a dynamic extent) names its replacement. Unchanged nodes are
shared.

`VarRewriter` is the `IRMutator` (ir/visitor.py, the one copy-on-write walker) under the
hook names passes override: `expr` (every expression, Vars included), `type`, `value`,
`stmt` / `stmt_<Class>` (every statement), `bind` / `bind_iter_arg` (binding sites).
"""

from __future__ import annotations

from typing import Any

from ...ir.expr import Expr, IterArg, Var
from ...ir.stmt import For, If, Scope, SeqStmts, SplitAivScope, Stmt, While, flatten
from ...ir.types import ShapedType, TupleType, Type
from ...ir.visitor import IRMutator


class VarRewriter(IRMutator):
    # -- the mutator's hooks, routed to the pass-facing names ----------------------------
    def visit_Expr(self, e: Expr) -> Expr:
        return self.expr(e)

    visit_Var = visit_Expr

    def visit_Type(self, t: Type) -> Type:
        return self.type(t)

    def visit_Stmt(self, s: Stmt) -> Stmt:
        hook = getattr(self, "stmt_" + type(s).__name__, None)
        return self.generic_mutate(s) if hook is None else hook(s)

    visit_SeqStmts = visit_Stmt

    def visit_stmt(self, s: Stmt | None) -> Stmt | None:
        return None if s is None else self.stmt(s)

    def visit_def(self, v: Var) -> Var:
        return self.bind_iter_arg(v) if type(v) is IterArg else self.bind(v)

    # -- the pass-facing names -----------------------------------------------------------
    def expr(self, e: Expr) -> Expr:
        return self.mapping.get(e, e) if isinstance(e, Var) else self.generic_mutate(e)

    def value(self, v: Any) -> Any:
        """The nodes inside a field value (a node, a tuple or a mapping of them) rewritten."""
        return self.mutate_value(v)

    def type(self, t: Type) -> Type:
        """`t` with the mapped Vars in its shape and valid shape substituted."""
        return self.generic_mutate(t) if self.mapping and isinstance(t, (ShapedType, TupleType)) else t

    def bind(self, v: Var) -> Var:
        """The Var a definition of `v` binds in the rewritten code."""
        return self.rebind(v, False)

    def bind_iter_arg(self, a: IterArg) -> IterArg:
        return self.rebind(a, True)

    def stmt(self, s: Stmt) -> Stmt:
        return self.visit(s)

    body = visit_stmt

    def stmt_SeqStmts(self, s: SeqStmts) -> Stmt:
        return IRMutator.visit_SeqStmts(self, s)

    stmt_Assign = stmt_Eval = stmt_If = stmt_For = stmt_While = stmt_Scope = stmt_SplitAivScope = \
        IRMutator.generic_mutate


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
