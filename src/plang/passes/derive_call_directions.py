"""DeriveCallDirections: every call of a program function records how it uses each argument.

The call gets kwarg `arg_directions=(ParamDirection, ...)`, one per argument: the
callee's parameter direction (In / Out / InOut), overridden to NoDep for the positions in
the call's `no_dep_args` (the runtime then skips dependency tracking on that argument).
The orchestration codegen submits tasks with exactly these directions.
"""

from __future__ import annotations

from ..ir.enums import ParamDirection
from ..ir.expr import Call, Expr, GlobalVar
from ..ir.function import Function, Program
from ..ir.node import freeze_attrs
from .analysis.var_rewrite import VarRewriter
from .analysis.var_uses import calls_in
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property


class _Directions(VarRewriter):
    def __init__(self, functions) -> None:
        super().__init__()
        self.functions = functions

    def expr(self, e: Expr) -> Expr:
        e = super().expr(e)
        if not (isinstance(e, Call) and isinstance(e.op, GlobalVar)):
            return e
        callee: Function | None = self.functions.get(e.op.name)
        if callee is None:
            raise PassError(f"call of unknown function {e.op.name!r}", e.span)
        if len(callee.params) != len(e.args):
            raise PassError(f"call of {callee.name!r} passes {len(e.args)} arguments, "
                            f"it takes {len(callee.params)}", e.span)
        no_dep = set(e.kwargs.get("no_dep_args", ()))
        dirs = tuple(ParamDirection.NoDep if i in no_dep else d
                     for i, d in enumerate(callee.param_directions))
        if e.kwargs.get("arg_directions") == dirs:
            return e
        return e.replace(kwargs=freeze_attrs({**e.kwargs, "arg_directions": dirs}))


@register_pass
class DeriveCallDirections(FunctionPass):
    name = "DeriveCallDirections"
    required = frozenset({"SplitIncoreOrch"})
    produced = frozenset({"CallDirectionsDerived"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not any(isinstance(c.op, GlobalVar) for c in calls_in(fn.body)):
            return fn
        return fn.replace(body=_Directions(program.functions).stmt(fn.body))


def check_call_directions(program: Program) -> None:
    for fn in program.functions.values():
        for c in calls_in(fn.body):
            if isinstance(c.op, GlobalVar) and len(c.kwargs.get("arg_directions", ())) != len(c.args):
                raise PassError(f"call of {c.op.name!r} in {fn.name!r} has no arg_directions for "
                                f"each argument", c.span)


register_property("CallDirectionsDerived", check_call_directions,
                  "every call of a program function records its arguments' directions")
