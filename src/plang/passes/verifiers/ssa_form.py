"""SSAForm: every Var is bound exactly once per function (params included)."""

from __future__ import annotations

from ...ir.function import Program
from ...ir.span import Span
from ..analysis.var_uses import stmt_defs, walk_stmts
from ..diagnostics import PassError
from ..framework import define_verifier


def check_ssa_form(program: Program) -> None:
    for fn in program.functions.values():
        first: dict[object, Span] = {p: fn.span for p in fn.params}
        for st in walk_stmts(fn.body):
            for v in stmt_defs(st):
                if v in first:
                    where = f"line {first[v].begin_line}" if first[v].is_known else "an earlier binding"
                    raise PassError(f"variable '{v.name}' is assigned more than once in function "
                                    f"'{fn.name}' (first bound at {where}); SSA form binds each "
                                    f"variable once", st.span)
                first[v] = st.span


SSAForm = define_verifier("SSAForm", check_ssa_form, "Every variable is bound exactly once.")
