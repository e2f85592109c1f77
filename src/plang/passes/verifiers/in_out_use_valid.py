"""InOutUseValid: a tensor passed to an Out / InOut parameter is stale after the call.

The call's result is the written tensor; reading the argument Var again would read the
value from before the write (and hide the dependency from the runtime), so every later
use in the calling function must use the call's result instead. Group functions are
exempt: they launch their AIC and AIV kernels together on the same arguments.
"""

from __future__ import annotations

from ...ir.enums import FunctionType, ParamDirection
from ...ir.expr import GlobalVar, Var
from ...ir.function import Function, Program
from ..analysis.var_uses import expr_vars, stmt_exprs, walk_expr, walk_stmts
from ..diagnostics import PassError
from ..framework import define_verifier

WRITTEN = (ParamDirection.Out, ParamDirection.InOut)


def check_in_out_use(program: Program) -> None:
    for fn in program.functions.values():
        if fn.func_type is not FunctionType.Group:
            _check_function(fn, program)


def _check_function(fn: Function, program: Program) -> None:
    stale: dict[Var, tuple[str, int]] = {}
    for s in walk_stmts(fn.body):
        exprs = list(stmt_exprs(s))
        for e in exprs:
            for v in expr_vars(e):
                if v in stale:
                    callee, line = stale[v]
                    raise PassError(f"'{v.name}' was passed to {callee!r} as an Out/InOut argument "
                                    f"(line {line}) and is used again in {fn.name!r}; use the call's "
                                    f"result instead", s.span)
        for e in exprs:
            walk_expr(e, lambda x: _record(x, program, stale))


def _record(e, program: Program, stale: dict[Var, tuple[str, int]]) -> None:
    from ...ir.expr import Call

    if not (isinstance(e, Call) and isinstance(e.op, GlobalVar)):
        return
    callee = program.functions.get(e.op.name)
    if callee is None:
        return
    for arg, d in zip(e.args, callee.param_directions):
        if d in WRITTEN and isinstance(arg, Var):
            stale[arg] = (callee.name, e.span.begin_line)


InOutUseValid = define_verifier("InOutUseValid", check_in_out_use,
                                "A tensor passed as Out / InOut is not used again after the call.")
