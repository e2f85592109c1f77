"""`pl.submit(..., predicate=(t[i] > 0), deps=[...])`: the predicate's shape and the
best-effort check that `t`'s producing task is among the submit's `deps=`."""

from __future__ import annotations

from typing import Sequence

from ...dtypes import TASK_ID
from ...ir.expr import Call, ConstInt, Eq, Expr, Ge, Gt, Le, Lt, Ne, TupleGetItem, Var
from ...ir.stmt import Assign, Stmt
from ...ir.visitor import IRVisitor

_COMPARISONS = (Eq, Ne, Lt, Le, Gt, Ge)


def predicate_shape_error(predicate: Expr) -> str | None:
    """Why `predicate` is not `tensor[indices] <cmp> <int literal>` (None when it is)."""
    ok = (
        isinstance(predicate, _COMPARISONS)
        and isinstance(predicate.lhs, Call)
        and getattr(predicate.lhs.op, "name", "") == "tensor.read"
        and isinstance(predicate.rhs, ConstInt)
    )
    return None if ok else "predicate= must be one comparison `tensor[indices] <op> <int literal>`"


def unlisted_producer(predicate: Expr, deps: Sequence[Expr | None],
                      blocks: Sequence[Sequence[Stmt]]) -> Var | None:
    """The task id that produced the predicate's tensor when it is statically known (the
    tensor was last bound, at the top level of an open block, from `t, tid = pl.submit(..)`)
    and missing from `deps` although every dep is a plain variable; else None."""
    tensor = predicate.lhs.args[0]
    if not isinstance(tensor, Var) or not all(isinstance(d, Var) for d in deps):
        return None
    producer = _producer_task(tensor, [s for block in blocks for s in block])
    if producer is None or any(d is producer for d in deps):
        return None
    return producer


def _producer_task(tensor: Var, stmts: list[Stmt]) -> Var | None:
    source: Expr | None = None
    for s in stmts:
        if isinstance(s, Assign) and s.var is tensor:
            source = s.value
        elif _defines(s, tensor):
            source = None  # rebound inside a loop / branch / scope: not statically known
    if not (isinstance(source, TupleGetItem) and source.index == 0 and isinstance(source.tuple, Var)):
        return None
    tasks = [s.var for s in stmts if isinstance(s, Assign) and isinstance(s.value, TupleGetItem)
             and s.value.tuple is source.tuple and s.value.index == 1
             and getattr(s.var.type, "dtype", None) is TASK_ID]
    return tasks[-1] if tasks else None


class _DefinesVar(IRVisitor):
    visit_types = False

    def __init__(self, var: Var) -> None:
        self.var, self.found = var, False

    def visit_def(self, var: Var) -> None:
        self.found = self.found or var is self.var
        super().visit_def(var)


def _defines(stmt: Stmt, var: Var) -> bool:
    v = _DefinesVar(var)
    v.visit_stmt(stmt)
    return v.found
