"""UnrollLoops: replace each `pl.unroll` loop (constant bounds) by one copy of its body per
iteration, the loop variable substituted by the iteration's constant.

Names the body assigns keep their Vars (in non-SSA IR each copy re-binds them, as Python
would); binders local to a nested statement (inner loop variables, iter args, scope index
and lane variables) get fresh Vars per copy. Iter args, if any, are chained: each copy
reads the previous copy's yielded values and the loop's return vars take the last ones.
"""

from __future__ import annotations

from ..ir.enums import ForKind
from ..ir.expr import ConstBool, ConstFloat, ConstInt, Expr, Var
from ..ir.function import Function, Program
from ..ir.printer import python_print
from ..ir.stmt import Assign, For, Scope, SplitAivScope, Stmt, Yield, flatten, seq
from .analysis.const_eval import const_int, fold
from .analysis.renaming import Renamer
from .analysis.var_uses import walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property

ATOMS = (Var, ConstInt, ConstFloat, ConstBool)


def check_no_unroll_loops(program: Program) -> None:
    for fn in program.functions.values():
        for s in walk_stmts(fn.body):
            if isinstance(s, For) and s.kind is ForKind.Unroll:
                raise PassError(f"function '{fn.name}' still has a pl.unroll loop (run UnrollLoops)", s.span)


register_property("NoUnrollLoops", check_no_unroll_loops, "No ForKind.Unroll loops remain.")


class _CopyRewriter(Renamer):
    """Substitutes the mapping, folds the constant arithmetic that creates, and gives
    statement-local binders (loop variables, iter args, scope index and lane variables)
    fresh Vars."""

    def expr(self, e: Expr) -> Expr:
        return fold(super().expr(e))

    def stmt_For(self, s: For) -> Stmt:
        self.mapping[s.loop_var] = Var(s.loop_var.name, s.loop_var.type, s.loop_var.span)
        return super().stmt_For(s)

    def stmt_Scope(self, s: Scope) -> Stmt:
        if s.index_var is not None:
            self.mapping[s.index_var] = Var(s.index_var.name, s.index_var.type, s.index_var.span)
        return super().stmt_Scope(s)

    def stmt_SplitAivScope(self, s: SplitAivScope) -> Stmt:
        self.mapping[s.lane_var] = Var(s.lane_var.name, s.lane_var.type, s.lane_var.span)
        return super().stmt_SplitAivScope(s)


@register_pass
class UnrollLoops(FunctionPass):
    name = "UnrollLoops"
    produced = frozenset({"NoUnrollLoops"})
    invalidated = frozenset({"SSAForm"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not any(isinstance(s, For) and s.kind is ForKind.Unroll for s in walk_stmts(fn.body)):
            return fn
        return fn.replace(body=seq(self.block(fn.body)))

    def block(self, s: Stmt) -> list[Stmt]:
        out: list[Stmt] = []
        for st in flatten(s):
            out.extend(self.stmt(st))
        return out

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, For) and s.kind is ForKind.Unroll:
            # Outer loops first: an inner pl.unroll's bounds may use the outer loop variable.
            return self.block(seq(self.unroll(s)))
        changes = {f: seq(self.block(v)) for f, v in s.fields() if isinstance(v, Stmt)}
        return [s.replace(**changes) if changes else s]

    def unroll(self, loop: For) -> list[Stmt]:
        bounds: list[int] = []
        for name in ("start", "stop", "step"):
            value = const_int(getattr(loop, name))
            if value is None:
                raise PassError(f"pl.unroll needs compile-time constant bounds; {name} is "
                                f"`{python_print(getattr(loop, name))}`", loop.span, self.name)
            bounds.append(value)
        start, stop, step = bounds
        if step == 0:
            raise PassError("pl.unroll step must not be 0", loop.span, self.name)
        body = flatten(loop.body)
        trailing = body.pop() if body and isinstance(body[-1], Yield) else None
        carried: list[Expr] = [a.init for a in loop.iter_args]
        out: list[Stmt] = []
        for k in range(start, stop, step):
            mapping: dict[Var, Expr] = {loop.loop_var: ConstInt(k, loop.loop_var.type.dtype, loop.span)}
            for a, value in zip(loop.iter_args, carried):
                if not isinstance(value, ATOMS):
                    bound = Var(a.name, a.type, a.span)
                    out.append(Assign(bound, value, loop.span))
                    value = bound
                mapping[a] = value
            rewriter = _CopyRewriter(mapping)
            out.extend(rewriter.stmt(s) for s in body)
            if trailing is not None:
                carried = [rewriter.expr(v) for v in trailing.values]
        out.extend(Assign(rv, value, loop.span) for rv, value in zip(loop.return_vars, carried))
        return out
