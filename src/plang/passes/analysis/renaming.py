"""Consistent renaming of the variables a statement binds.

Unlike `clone_fresh` (a new Var per *binding*, right for SSA code), `rename_locals` gives
each bound *Var* one new Var shared by all its bindings, so non-SSA code (a name re-bound
in a loop body and read in the next iteration) keeps its meaning. `Renamer` is the
underlying `VarRewriter`: every iter arg it binds becomes a new IterArg (init substituted)
reused by all later references. Scalar arithmetic over substituted constants is folded.
"""

from __future__ import annotations

from ...ir.expr import Expr, IterArg, Var
from ...ir.stmt import Stmt
from ...ir.types import ShapedType, TupleType
from .const_eval import fold
from .var_rewrite import VarRewriter
from .var_uses import defined_vars


class Renamer(VarRewriter):
    def expr(self, e: Expr) -> Expr:
        """Substituted; scalar arithmetic that substitution made constant is folded (as the
        parser folds it), so `N // 64` with N bound to 128 reads `2`."""
        new = super().expr(e)
        return e if new is e else fold(new)

    def bind_iter_arg(self, a: IterArg) -> IterArg:
        mapped = self.mapping.get(a)
        if not isinstance(mapped, IterArg):
            mapped = self.mapping[a] = IterArg(a.name, self.type(a.type), self.expr(a.init), a.span)
        return mapped


def rename_locals(s: Stmt, mapping: dict[Var, Expr] | None = None) -> Stmt:
    """A copy of `s` with every Var bound inside renamed and `mapping` substituted (in
    types too: a mapped dynamic dim in a local's shape is replaced); a bound Var that
    `mapping` maps to a Var is renamed to that one."""
    full = dict(mapping or {})
    local = [v for v in defined_vars(s) if not isinstance(v, IterArg) and not isinstance(full.get(v), Var)]
    shaped = [v for v in local if isinstance(v.type, (ShapedType, TupleType))]
    for v in local:  # scalars first: a local's shape may name one (`d = x.shape[1]`)
        if not isinstance(v.type, (ShapedType, TupleType)):
            full[v] = Var(v.name, v.type, v.span)
    retype = VarRewriter(full).type
    for v in shaped:
        full[v] = Var(v.name, retype(v.type), v.span)
    return Renamer(full).stmt(s)
