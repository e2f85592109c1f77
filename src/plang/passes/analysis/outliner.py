"""Turn a region of a function into a new function plus the call that replaces it.

Used by the outlining passes (hierarchy, InCore, cluster, spmd). The region's captured
values become parameters, in first-use order: a captured tensor the region writes (through
an op's written operand or a callee's Out / InOut parameter, following the versions a
write produces) is `Out`, or `InOut` when the region also reads it; everything else is
`In`. Values the region defines and the rest of the function uses become return values;
the caller rebinds them from the call (one value directly, several through a tuple).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...ir.enums import FunctionType, Level, ParamDirection, Role
from ...ir.expr import Call, Expr, GlobalVar, TupleGetItem, Var
from ...ir.function import Function
from ...ir.span import Span
from ...ir.stmt import Assign, Eval, Return, Stmt, seq
from ...ir.types import TensorType, TupleType, Type
from .memory_effects import alias_roots, call_effects
from .var_rewrite import VarRewriter
from .var_uses import calls_in, defined_vars, expr_vars, free_vars, stmt_exprs, walk_stmts


def use_counts(s: Stmt) -> Counter[Var]:
    """How many times each Var is read in `s` (every nested statement included)."""
    counts: Counter[Var] = Counter()
    for st in walk_stmts(s):
        for e in stmt_exprs(st):
            counts.update(_all_var_refs(e))
    return counts


def _all_var_refs(e: Expr) -> list[Var]:
    out: list[Var] = []
    from .var_uses import walk_expr

    walk_expr(e, lambda x: out.append(x) if isinstance(x, Var) else None)
    return out


def param_directions(region: Stmt, inputs: Sequence[Var],
                     functions: Mapping[str, Function]) -> list[ParamDirection]:
    """In / Out / InOut for each captured input of `region`, derived from its uses."""
    roots = alias_roots(region, functions)
    captured = set(inputs)
    read: set[Var] = set()
    written: set[Var] = set()
    for call in calls_in(region):
        reads, writes = call_effects(call, functions)
        for group, into in ((reads, read), (writes, written)):
            for e in group:
                for v in expr_vars(e) if not isinstance(e, Var) else [e]:
                    r = roots.get(v, v)
                    if r in captured:
                        into.add(r)
    dirs = []
    for v in inputs:
        if not isinstance(v.type, TensorType) or v not in written:
            dirs.append(ParamDirection.In)
        else:
            dirs.append(ParamDirection.InOut if v in read else ParamDirection.Out)
    return dirs


@dataclass
class Outlined:
    function: Function
    replacement: Stmt  # the call (and tuple unpacking) that takes the region's place


def outline(region: Stmt, *, name: str, outer_uses: Counter[Var], region_uses: Counter[Var] | None = None,
            exclude: set[Var], functions: Mapping[str, Function],
            func_type: FunctionType, level: Level | None = None, role: Role | None = None,
            attrs: Mapping[str, Any] | None = None, call_kwargs: Mapping[str, Any] | None = None,
            prologue: Sequence[Stmt] = (), extra_results: Sequence[Var] = (),
            span: Span | None = None) -> Outlined:
    """Outline `region` into function `name`.

    `outer_uses` counts uses over the whole enclosing function; a region-defined Var whose
    count exceeds its uses inside the region is live after it and becomes a result.
    `exclude` lists Vars never captured (program-global dynamic dims). `prologue` is
    prepended to the new body (e.g. binding the SPMD block index). `extra_results` are
    caller Vars bound to trailing results of the call beyond the region's own outputs
    (e.g. the task id of `with ... as tid`); `call_kwargs` may carry Var lists that refer
    to captured values and are translated to argument positions by the caller.
    """
    body = seq([*prologue, region]) if prologue else region
    inputs = [v for v in free_vars(body) if v not in exclude]
    inner = region_uses if region_uses is not None else use_counts(region)
    outputs = [v for v in defined_vars(region) if outer_uses.get(v, 0) > inner.get(v, 0)]
    dirs = param_directions(body, inputs, functions)

    rewriter = VarRewriter(fresh=True)
    params = [rewriter.bind(v) for v in inputs]
    new_body = rewriter.stmt(body)
    results = [rewriter.mapping[v] for v in outputs]
    fn_body = seq([new_body, Return(results, span)], span) if results else new_body
    fn = Function(name, params, dirs, [v.type for v in outputs], fn_body, func_type, level,
                  role, attrs, span)

    targets = [*outputs, *extra_results]
    result_type: Type
    if len(targets) == 1:
        result_type = targets[0].type
    else:
        result_type = TupleType([v.type for v in targets])
    kwargs = dict(call_kwargs or {})
    if "no_dep_args" in kwargs:
        kwargs["no_dep_args"] = index_of(kwargs["no_dep_args"], inputs)
    call = Call(GlobalVar(name, span), inputs, kwargs, result_type, span)
    if not targets:
        return Outlined(fn, Eval(call, span))
    if len(targets) == 1:
        return Outlined(fn, Assign(targets[0], call, span))
    ret = Var(f"{name}_ret", result_type, span)
    stmts: list[Stmt] = [Assign(ret, call, span)]
    stmts += [Assign(v, TupleGetItem(ret, i, span), span) for i, v in enumerate(targets)]
    return Outlined(fn, seq(stmts, span))


def unique_name(base: str, taken: set[str]) -> str:
    """`base` (or `base_1`, `base_2`, ...) not yet in `taken`; records the choice."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def global_dims(fn: Function) -> set[Var]:
    """Dynamic-dim Vars in `fn`'s types that `fn` does not bind: program-global (declared
    by `pl.dynamic`), so an outlined region refers to them without capturing them."""
    local = set(fn.params) | set(defined_vars(fn.body))
    out: set[Var] = set()
    for t in [p.type for p in fn.params] + list(fn.return_types) + [v.type for v in local]:
        for d in getattr(t, "shape", ()) or ():
            out.update(v for v in expr_vars(d) if v not in local)
    return out


def index_of(values: Sequence[Any], inputs: Sequence[Var]) -> tuple[int, ...]:
    """Positions in `inputs` of the Vars listed in `values` (others ignored)."""
    pos = {v: i for i, v in enumerate(inputs)}
    return tuple(pos[v] for v in values if isinstance(v, Var) and v in pos)

