"""FlattenCallExpr: three-address form for calls.

A call nested in another call's operands, in scalar arithmetic, or in a condition, loop
bound, iter-arg init, return or yield is bound to a fresh Var (named after the op, e.g.
`exp_tmp`) just before its statement, innermost first; afterwards a call appears only as
the whole value of an assignment or evaluation, with no call among its operands. Scope
attributes (e.g. `core_num=pl.system.available_cluster_count()`) are left in place.
A call in a `pl.while_` condition would have to be re-evaluated every iteration, so it is
reported as an error.
"""

from __future__ import annotations

from ..ir.expr import Call, Expr, GlobalVar, Var
from ..ir.function import Function, Program
from ..ir.stmt import Assign, Eval, For, If, Return, Scope, SplitAivScope, Stmt, While, Yield, flatten, seq
from .analysis.var_rewrite import VarRewriter, substitute
from .analysis.var_uses import expr_children, walk_expr, walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property


def _contains_call(value: object) -> bool:
    found = []
    for e in expr_children(value):
        walk_expr(e, lambda x: found.append(x) if isinstance(x, Call) else None)
    return bool(found)


def check_calls_flattened(program: Program) -> None:
    for fn in program.functions.values():
        for s in walk_stmts(fn.body):
            if isinstance(s, (Assign, Eval)):
                e = s.value if isinstance(s, Assign) else s.expr
                operands = (e.args, dict(e.kwargs)) if isinstance(e, Call) else e
                nested = _contains_call(operands)
            elif isinstance(s, (If, While)):
                nested = _contains_call(s.cond)
            elif isinstance(s, For):
                nested = _contains_call((s.start, s.stop, s.step))
            elif isinstance(s, (Return, Yield)):
                nested = _contains_call(s.values)
            else:
                nested = False
            if nested or isinstance(s, (For, While)) and _contains_call(tuple(a.init for a in s.iter_args)):
                raise PassError(f"function '{fn.name}' has a nested call expression (run FlattenCallExpr)",
                                s.span)


register_property("CallsFlattened", check_calls_flattened,
                  "Calls appear only as whole assignment / evaluation values, with atomic operands.")


def temp_name(call: Call) -> str:
    base = call.op.name if isinstance(call.op, GlobalVar) else call.op.short_name
    return f"{base.rstrip('_')}_tmp"


class _Hoister(VarRewriter):
    """Binds every call it meets (innermost first) to a temporary appended to `prefix`."""

    def __init__(self, prefix: list[Stmt]) -> None:
        super().__init__()
        self.prefix = prefix

    def expr(self, e: Expr) -> Expr:
        e = super().expr(e)
        if isinstance(e, Call):
            tmp = Var(temp_name(e), e.type, e.span)
            self.prefix.append(Assign(tmp, e, e.span))
            return tmp
        return e

    def top(self, e: Expr) -> Expr:
        """Like `expr`, but a call at the top stays in place (its operands are hoisted)."""
        return VarRewriter.expr(self, e) if isinstance(e, Call) else self.expr(e)


@register_pass
class FlattenCallExpr(FunctionPass):
    name = "FlattenCallExpr"
    required = frozenset({"SSAForm"})
    produced = frozenset({"CallsFlattened"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        return fn.replace(body=seq(self.block(fn.body)))

    def block(self, s: Stmt | None) -> list[Stmt]:
        out: list[Stmt] = []
        for st in flatten(s):
            prefix: list[Stmt] = []
            new = self.stmt(st, _Hoister(prefix))
            out.extend(prefix)
            out.append(new)
        return out

    def stmt(self, s: Stmt, h: _Hoister) -> Stmt:
        if isinstance(s, Assign):
            return s.replace(value=h.top(s.value))
        if isinstance(s, Eval):
            return s.replace(expr=h.top(s.expr))
        if isinstance(s, (Return, Yield)):
            return s.replace(values=tuple(h.expr(v) for v in s.values))
        if isinstance(s, If):
            return s.replace(cond=h.expr(s.cond), then_body=seq(self.block(s.then_body)),
                             else_body=None if s.else_body is None else seq(self.block(s.else_body)))
        if isinstance(s, (For, While)):
            if isinstance(s, While) and _contains_call(s.cond):
                raise PassError("a call in a pl.while_ condition cannot be flattened; compute it in the "
                                "loop body and carry it as a value", s.span, self.name)
            iter_args = tuple(a.replace(init=h.expr(a.init)) if _contains_call(a.init) else a
                              for a in s.iter_args)
            remap = {old: new for old, new in zip(s.iter_args, iter_args) if old is not new}
            loop = substitute(s, remap).replace(iter_args=iter_args) if remap else s
            changes = dict(body=seq(self.block(loop.body)))
            if isinstance(s, For):
                changes.update(start=h.expr(s.start), stop=h.expr(s.stop), step=h.expr(s.step))
            return loop.replace(**changes)
        if isinstance(s, (Scope, SplitAivScope)):
            return s.replace(body=seq(self.block(s.body)))
        return s
