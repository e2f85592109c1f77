"""NoNestedInCore: a core function (InCore / AIC / AIV) opens no scope that would outline
into another dispatch (InCore, cluster, SPMD, hierarchy) and calls no InCore function."""

from __future__ import annotations

from ...ir.enums import FunctionType, ScopeKind
from ...ir.expr import GlobalVar
from ...ir.function import Program
from ...ir.stmt import Scope
from ..analysis.var_uses import calls_in, walk_stmts
from ..diagnostics import PassError
from ..framework import define_verifier

DISPATCHING = (ScopeKind.InCore, ScopeKind.Cluster, ScopeKind.Spmd, ScopeKind.Hierarchy)


def check_no_nested_incore(program: Program) -> None:
    for fn in program.functions.values():
        if not fn.func_type.is_core:
            continue
        kind = fn.func_type.value
        for s in walk_stmts(fn.body):
            if isinstance(s, Scope) and s.kind in DISPATCHING:
                raise PassError(f"{s.kind.value} scope inside {kind} function {fn.name!r}: a kernel already "
                                f"runs on a core and cannot open another dispatch", s.span)
        for c in calls_in(fn.body):
            callee = program.functions.get(c.op.name) if isinstance(c.op, GlobalVar) else None
            if callee is not None and callee.func_type is FunctionType.InCore:
                raise PassError(f"{kind} function {fn.name!r} calls InCore function {callee.name!r}: InCore "
                                f"functions are dispatched from orchestration, not nested", c.span)


NoNestedInCore = define_verifier("NoNestedInCore", check_no_nested_incore,
                                 "Core functions open no nested InCore / cluster / SPMD dispatch.")
