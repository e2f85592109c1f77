"""Which operands a call reads and writes, and which tensor a written result aliases.

An op's facts name the parameters it reads / writes; a call of a program function reads
its In / InOut arguments and writes its Out / InOut ones. The result of a writing call
(`out_1 = tile.store(t, [0, 0], out_0)`) is the written tensor after the write: it
*aliases* `out_0`, so later reads of `out_1` are reads of `out_0`'s storage.
"""

from __future__ import annotations

from typing import Iterator, Mapping

from ...ir.enums import ParamDirection
from ...ir.expr import Call, Expr, GlobalVar, Var
from ...ir.function import Function
from ...ir.ops.registry import Op
from ...ir.stmt import Assign, For, If, Stmt, While, trailing_yield
from ...ir.types import TensorType
from .var_uses import calls_in, expr_children, walk_stmts

WRITING = (ParamDirection.Out, ParamDirection.InOut)
READING = (ParamDirection.In, ParamDirection.InOut)


def op_operands(call: Call) -> Iterator[tuple[str, Expr]]:
    """(parameter name, expression) for every expression operand of an op call."""
    op: Op = call.op
    required = [p.name for p in op.params if p.is_expr and p.required]
    yield from zip(required, call.args)
    for name, value in call.kwargs.items():
        for e in expr_children(value):
            yield name, e


def call_effects(call: Call, functions: Mapping[str, Function]) -> tuple[list[Expr], list[Expr]]:
    """(read operands, written operands) of one call (nested calls not included)."""
    if isinstance(call.op, GlobalVar):
        callee = functions.get(call.op.name)
        if callee is None:
            return list(call.args), []
        reads, writes = [], []
        for arg, d in zip(call.args, callee.param_directions):
            if d in READING or d is ParamDirection.NoDep:
                reads.append(arg)
            if d in WRITING:
                writes.append(arg)
        return reads, writes
    if not isinstance(call.op, Op):
        return list(call.args), []
    facts = call.op.facts
    reads, writes = [], []
    for name, e in op_operands(call):
        if name in facts.writes:
            writes.append(e)
        else:
            reads.append(e)
    return reads, writes


def alias_roots(body: Stmt, functions: Mapping[str, Function]) -> dict[Var, Var]:
    """For every Var in `body` that names a written tensor after a write (or a loop /
    branch carrying one), the Var it is a new version of. Unlisted Vars are their own root."""
    roots: dict[Var, Var] = {}

    def root(e: Expr) -> Var | None:
        if not isinstance(e, Var):
            return None
        return roots.get(e, e)

    stmts = list(walk_stmts(body))
    while True:  # to a fixpoint: a branch's results are met before the writes it yields
        before = dict(roots)
        for s in stmts:
            if isinstance(s, Assign) and isinstance(s.value, Call):
                _, writes = call_effects(s.value, functions)
                if len(writes) == 1 and (r := root(writes[0])) is not None:
                    roots[s.var] = r
            elif isinstance(s, Assign) and isinstance(s.value, Var) and s.value in roots:
                roots[s.var] = roots[s.value]
            elif isinstance(s, (For, While)):
                for ia, rv in zip(s.iter_args, s.return_vars):
                    r = root(ia.init)
                    if r is not None and isinstance(ia.type, TensorType):
                        roots[ia] = roots[rv] = r
            elif isinstance(s, If):
                then_yield = trailing_yield(s.then_body)
                if then_yield is not None:
                    for v, rv in zip(then_yield.values, s.return_vars):
                        r = root(v)
                        if r is not None and r is not v:
                            roots[rv] = r
        if roots == before:
            return roots


def written_params(fn: Function, functions: Mapping[str, Function]) -> set[Var]:
    """The parameters of `fn` whose storage its body writes (directly or through a version)."""
    roots = alias_roots(fn.body, functions)
    params = set(fn.params)
    return {r for c in calls_in(fn.body) for w in call_effects(c, functions)[1]
            if isinstance(w, Var) and (r := roots.get(w, w)) in params}
