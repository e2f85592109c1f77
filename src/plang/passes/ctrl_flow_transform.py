"""CtrlFlowTransform: remove `break` / `continue` by guarding, producing structured control flow.

Inside a loop body (non-SSA IR, before ConvertToSSA):
- the statements after a `break` / `continue` in the same block are unreachable and dropped;
- when the escape sits inside an `if` / scope, a flag `cont = True` records it and the rest
  of the enclosing block runs under `if not cont:` (`cont = False` at the top of the body);
- `break` also sets `brk = True` (`brk = False` before the loop): a `for` body runs under
  `if not brk:`, a `while` condition becomes `not brk and cond`.
ConvertToSSA then threads the flags as ordinary rebound names. Loops whose values are
carried explicitly (`init_values=` / `pl.yield_`) cannot also escape early: that is an error.
"""

from __future__ import annotations

from ..dtypes import BOOL
from ..ir.expr import And, ConstBool, Not, Var
from ..ir.function import Function, Program
from ..ir.stmt import (
    Assign,
    Break,
    Continue,
    For,
    If,
    Scope,
    SeqStmts,
    SplitAivScope,
    Stmt,
    While,
    flatten,
    seq,
)
from ..ir.types import ScalarType
from .analysis.var_uses import walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property

ESCAPES = (Break, Continue)


def check_structured_control_flow(program: Program) -> None:
    for fn in program.functions.values():
        for s in walk_stmts(fn.body):
            if isinstance(s, ESCAPES):
                raise PassError(f"'{type(s).__name__.lower()}' in function '{fn.name}' is not "
                                "structured control flow (run CtrlFlowTransform)", s.span)


register_property("StructuredControlFlow", check_structured_control_flow,
                  "No break / continue statements.")


@register_pass
class CtrlFlowTransform(FunctionPass):
    name = "CtrlFlowTransform"
    produced = frozenset({"StructuredControlFlow"})
    invalidated = frozenset({"SSAForm"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        body = self.stmt(fn.body)
        return fn if body is fn.body else fn.replace(body=body)

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, SeqStmts):
            stmts = [self.stmt(x) for x in s.stmts]
            return s if all(a is b for a, b in zip(stmts, s.stmts)) else seq(stmts, s.span)
        if isinstance(s, If):
            then_body = self.stmt(s.then_body)
            else_body = None if s.else_body is None else self.stmt(s.else_body)
            if then_body is s.then_body and else_body is s.else_body:
                return s
            return s.replace(then_body=then_body, else_body=else_body)
        if isinstance(s, (Scope, SplitAivScope)):
            body = self.stmt(s.body)
            return s if body is s.body else s.replace(body=body)
        if isinstance(s, (For, While)):
            body = self.stmt(s.body)
            loop = s if body is s.body else s.replace(body=body)
            first = next((x for x in walk_stmts(body) if isinstance(x, ESCAPES)), None)
            return loop if first is None else _LoopLowering(loop, first).lower()
        return s


class _LoopLowering:
    """Rewrite one loop whose body (inner loops already done) contains break / continue."""

    def __init__(self, loop: For | While, first_escape: Stmt) -> None:
        if loop.iter_args:
            raise PassError(f"'{type(first_escape).__name__.lower()}' in a loop that carries values "
                            "explicitly (init_values= / pl.yield_) is not supported; carry them by "
                            "re-binding names instead", first_escape.span, "CtrlFlowTransform")
        self.loop = loop
        stmts = flatten(loop.body)
        self.has_break = any(isinstance(x, Break) for x in walk_stmts(loop.body))
        nested = any(isinstance(x, ESCAPES) for s in stmts if not isinstance(s, ESCAPES)
                     for x in walk_stmts(s))
        self.brk = Var("brk", ScalarType(BOOL), loop.span) if self.has_break else None
        self.cont = Var("cont", ScalarType(BOOL), loop.span) if nested else None
        self.stmts = stmts

    def lower(self) -> Stmt:
        body = self.block(self.stmts)
        if self.cont is not None:
            body = [Assign(self.cont, ConstBool(False), self.loop.span)] + body
        if self.brk is None:
            return self.loop.replace(body=seq(body))
        init = Assign(self.brk, ConstBool(False), self.loop.span)
        not_broken = Not(self.brk, self.loop.span)
        if isinstance(self.loop, While):
            loop = self.loop.replace(cond=And(not_broken, self.loop.cond, span=self.loop.cond.span),
                                     body=seq(body))
        else:
            loop = self.loop.replace(body=If(not_broken, seq(body), span=self.loop.span))
        return SeqStmts([init, loop], self.loop.span)

    def escape(self, s: Stmt) -> list[Stmt]:
        out = [Assign(self.brk, ConstBool(True), s.span)] if isinstance(s, Break) else []
        if self.cont is not None:
            out.append(Assign(self.cont, ConstBool(True), s.span))
        return out

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            if isinstance(s, ESCAPES):
                return out + self.escape(s)
            if not any(isinstance(x, ESCAPES) for x in walk_stmts(s)):
                out.append(s)
                continue
            out.append(self.compound(s))
            rest = stmts[i + 1:]
            if rest:
                out.append(If(Not(self.cont, s.span), seq(self.block(rest)), span=s.span))
            return out
        return out

    def compound(self, s: Stmt) -> Stmt:
        if isinstance(s, If):
            if s.return_vars:
                raise PassError("'break' / 'continue' inside an if that yields values is not supported",
                                s.span, "CtrlFlowTransform")
            else_body = None if s.else_body is None else seq(self.block(flatten(s.else_body)))
            return s.replace(then_body=seq(self.block(flatten(s.then_body))), else_body=else_body)
        return s.replace(body=seq(self.block(flatten(s.body))))
