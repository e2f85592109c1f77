"""CtrlFlowTransform: remove `break` / `continue` by guarding, producing structured control flow.

Inside a loop body (non-SSA IR, before ConvertToSSA):
- the statements after a `break` / `continue` in the same block are unreachable and dropped;
- when the escape sits inside an `if` / scope, a flag `cont = True` records it and the rest
  of the enclosing block runs under `if not cont:` (`cont = False` at the top of the body);
- `break` also sets `brk = True` (`brk = False` before the loop): a `for` body runs under
  `if not brk:`, a `while` condition becomes `not brk and cond`.
ConvertToSSA then threads the flags as ordinary rebound names. In a loop carrying values
explicitly (`init_values=` / `pl.yield_`) the body works on per-iteration copies of the
carried values and yields them (a `continue` keeps them as they were, a `break` leaves with
them); the break flag is carried as an extra iter arg.
"""

from __future__ import annotations

from ..dtypes import BOOL
from ..ir.expr import And, ConstBool, IterArg, Not, Var
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
    Yield,
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
        self.loop = loop
        stmts = flatten(loop.body)
        if loop.iter_args and not (stmts and isinstance(stmts[-1], Yield)):
            raise PassError(f"'{type(first_escape).__name__.lower()}' in a loop that carries values "
                            "needs the loop body to end with pl.yield_", first_escape.span,
                            "CtrlFlowTransform")
        self.has_break = any(isinstance(x, Break) for x in walk_stmts(loop.body))
        nested = any(isinstance(x, ESCAPES) for s in stmts if not isinstance(s, ESCAPES)
                     for x in walk_stmts(s))
        self.brk = Var("brk", ScalarType(BOOL), loop.span) if self.has_break else None
        self.cont = Var("cont", ScalarType(BOOL), loop.span) if nested else None
        self.stmts = stmts

    def lower(self) -> Stmt:
        if self.loop.iter_args:
            return self.lower_carried()
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

    def lower_carried(self) -> Stmt:
        """A loop with explicit iter args: the body works on per-iteration copies of the
        carried values (`x_carry = x` at the top, the trailing yield's values assigned to them
        where it is reached) and yields the copies, so `continue` carries the values as they
        were and `break` leaves with them. The break flag is itself an iter arg."""
        loop, span = self.loop, self.loop.span
        *stmts, yielded = self.stmts
        carry = [Var(f"{a.name}_carry", a.type, span) for a in loop.iter_args]
        top = [Assign(c, a, span) for c, a in zip(carry, loop.iter_args)]
        reached = [Assign(c, v, yielded.span) for c, v in zip(carry, yielded.values)]
        body = self.block(stmts + reached)
        if self.cont is not None:
            body = [Assign(self.cont, ConstBool(False), span)] + body
        if self.brk is None:
            return loop.replace(body=seq(top + body + [Yield(carry, yielded.span)]))
        broken = IterArg("brk", self.brk.type, ConstBool(False), span)
        top.append(Assign(self.brk, broken, span))
        if isinstance(loop, While):
            loop = loop.replace(cond=And(Not(broken, span), loop.cond, span=loop.cond.span))
        else:
            body = [If(Not(self.brk, span), seq(body), span=span)]
        return loop.replace(iter_args=loop.iter_args + (broken,),
                            return_vars=loop.return_vars + (Var("brk", self.brk.type, span),),
                            body=seq(top + body + [Yield([*carry, self.brk], yielded.span)]))

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
