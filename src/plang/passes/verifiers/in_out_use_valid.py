"""InOutUseValid: a tensor passed to an Out / InOut parameter is stale after the call.

The call's result is the written tensor; reading the argument Var again would read the
value from before the write (and hide the dependency from the runtime), so every later
use in the calling function must use the call's result instead.

"Later" follows control flow: the two branches of an `if` exclude each other (a write in
one does not make the argument stale in the other; after the `if` it is stale when either
branch wrote it), a re-binding of the name makes it fresh again, and a loop body's writes
reach its next iteration (except to its iter args, which the loop header re-binds).
Group and Spmd wrappers are exempt: they launch their kernels together on the same arguments.
"""

from __future__ import annotations

from ...ir.enums import FunctionType, ParamDirection
from ...ir.expr import Call, Expr, GlobalVar, Var
from ...ir.function import Program
from ...ir.stmt import Assign, Eval, For, If, Return, Scope, SeqStmts, SplitAivScope, Stmt, While, Yield
from ..analysis.var_uses import expr_children, stmt_exprs
from ..diagnostics import PassError
from ..framework import define_verifier

WRITTEN = (ParamDirection.Out, ParamDirection.InOut)
WRAPPERS = (FunctionType.Group, FunctionType.Spmd)


def check_in_out_use(program: Program) -> None:
    for fn in program.functions.values():
        if fn.func_type not in WRAPPERS:
            _Checker(program, fn.name).stmt(fn.body)


class _Checker:
    """Walks a body in control-flow order; `stale` maps a Var to the call that wrote it."""

    def __init__(self, program: Program, fn_name: str | None) -> None:
        self.program, self.fn_name = program, fn_name  # fn_name None: collect writes, report nothing
        self.stale: dict[Var, tuple[str, int]] = {}

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            for c in s.stmts:
                self.stmt(c)
        elif isinstance(s, If):
            self.reads(s, s.cond)
            before = dict(self.stale)
            self.stmt(s.then_body)
            after_then, self.stale = self.stale, before
            if s.else_body is not None:
                self.stmt(s.else_body)
            self.stale = {**after_then, **self.stale}
        elif isinstance(s, (For, While)):
            for e in stmt_exprs(s):
                self.reads(s, e)
            sub = _Checker(self.program, None)
            sub.stmt(s.body)
            self.stale.update({v: w for v, w in sub.stale.items() if v not in s.iter_args})
            self.stmt(s.body)
            for a in s.iter_args:
                self.stale.pop(a, None)
        elif isinstance(s, (Scope, SplitAivScope)):
            for e in stmt_exprs(s):
                self.reads(s, e)
            self.stmt(s.body)
        elif isinstance(s, (Assign, Eval, Yield, Return)):
            for e in stmt_exprs(s):
                self.reads(s, e)
            if isinstance(s, Assign):
                self.stale.pop(s.var, None)

    def reads(self, s: Stmt, e: Expr) -> None:
        """Check the Vars `e` reads, then mark what its calls write (a call's own arguments
        are read before it writes them)."""
        if isinstance(e, Var):
            if e in self.stale and self.fn_name is not None:
                callee, line = self.stale[e]
                raise PassError(f"'{e.name}' was passed to {callee!r} as an Out/InOut argument "
                                f"(line {line}) and is used again in {self.fn_name!r}; use the call's "
                                f"result instead", s.span)
            return
        for name in e._fields:
            if name != "type":
                for child in expr_children(getattr(e, name)):
                    self.reads(s, child)
        if isinstance(e, Call) and isinstance(e.op, GlobalVar):
            callee = self.program.functions.get(e.op.name)
            if callee is not None:
                for arg, d in zip(e.args, callee.param_directions):
                    if d in WRITTEN and isinstance(arg, Var):
                        self.stale.setdefault(arg, (callee.name, e.span.begin_line))


InOutUseValid = define_verifier("InOutUseValid", check_in_out_use,
                                "A tensor passed as Out / InOut is not used again after the call.")
