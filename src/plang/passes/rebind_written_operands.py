"""RebindWrittenOperands: a write op evaluated for its effect rebinds what it writes.

`pl.store(t, [0, 0], c)` as a statement writes `c` in place; so do a statement
`pl.assemble(c, x, [0, 0])` and `pl.write(c, [i], v)` (and `c[i, j] = v`). The op's result
is the written value after the write, so the statement becomes `c = pl.store(t, [0, 0], c)`:
ConvertToSSA then threads the new version through loops and branches, and an outlined scope
returns it and the caller is rebound to the call's result, so a later `return c` reads the
written tensor. Only ops (whose registry facts name one written operand, a Var of the
result's type) are rebound; a call of a program function with an Out / InOut argument is
not (InOutUseValid asks for its result to be used instead).
"""

from __future__ import annotations

from ..ir.equality import structural_equal
from ..ir.expr import Call, Var
from ..ir.function import Function, Program
from ..ir.ops.registry import Op
from ..ir.stmt import Assign, Eval, Stmt
from ..ir.visitor import IRMutator
from .analysis.memory_effects import call_effects
from .analysis.var_uses import walk_stmts
from .framework import FunctionPass, register_pass


def written_var(e: object) -> Var | None:
    """The Var an op call writes, when rebinding it to the call's result is exact."""
    if not (isinstance(e, Call) and isinstance(e.op, Op)):
        return None
    _, writes = call_effects(e, {})
    if len(writes) != 1 or not isinstance(writes[0], Var):
        return None
    return writes[0] if structural_equal(writes[0].type, e.type) else None


class _Rebinder(IRMutator):
    mutate_types = False

    def visit_Eval(self, s: Eval) -> Stmt:
        target = written_var(s.expr)
        return s if target is None else Assign(target, s.expr, s.span)


@register_pass
class RebindWrittenOperands(FunctionPass):
    name = "RebindWrittenOperands"
    invalidated = frozenset({"SSAForm"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not any(isinstance(s, Eval) and written_var(s.expr) for s in walk_stmts(fn.body)):
            return fn
        return fn.replace(body=_Rebinder().visit_stmt(fn.body))


__all__ = ["RebindWrittenOperands", "written_var"]
