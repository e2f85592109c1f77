"""LowerPipelineLoops: `for i in pl.pipeline(start, stop, step, stage=F)` becomes a loop
whose body is the original body replicated F times (stage k runs iteration `j + k*step`),
stepping by `F*step`, plus a tail loop for the iterations left when F does not divide the
trip count. Carried values thread through the stages in order. With static bounds the
tail is emitted only when needed; with dynamic bounds it always is (and may run zero
times). Each stage is a fresh copy, so the result stays in SSA form.
"""

from __future__ import annotations

from ..ir.enums import ForKind
from ..ir.expr import Add, ConstInt, Expr, FloorDiv, IterArg, Mul, Sub, Var
from ..ir.function import Function, Program
from ..ir.stmt import For, Stmt, Yield, flatten, seq
from ..ir.types import dim_value
from .analysis.var_rewrite import VarRewriter, clone_fresh
from .analysis.var_uses import walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property

MAX_DYNAMIC_STAGES = 64  # body copies a pipeline loop of unknown trip count may ask for


def _is_pipeline(s: Stmt) -> bool:
    return isinstance(s, For) and s.kind is ForKind.Pipeline


class _Lower(VarRewriter):
    def stmt_For(self, s: For) -> Stmt:
        s = super().stmt_For(s)
        if s.kind is not ForKind.Pipeline:
            return s
        return lower_pipeline(s)


def _const(v: int, like: Expr) -> ConstInt:
    return ConstInt(v, like.type.dtype)


def _main_stop(start: Expr, stop: Expr, step: Expr, stages: int) -> Expr:
    """`start + trips // stages * stages * step` for a dynamic trip count, constants folded."""
    span = Sub(stop, start) if dim_value(start) != 0 else stop
    trips = span if dim_value(step) == 1 else FloorDiv(Add(span, Sub(step, _const(1, step))), step)
    whole = Mul(FloorDiv(trips, _const(stages, step)), _const(stages, step))
    if dim_value(step) != 1:
        whole = Mul(whole, step)
    return whole if dim_value(start) == 0 else Add(start, whole)


def lower_pipeline(loop: For) -> Stmt:
    stages = loop.attrs.get("stage")
    if not isinstance(stages, int) or stages < 1:
        raise PassError(f"pl.pipeline needs a positive integer stage=, got {stages!r}", loop.span)
    start, stop, step = loop.start, loop.stop, loop.step
    s0, s1, st = dim_value(start), dim_value(stop), dim_value(step)
    attrs = {k: v for k, v in loop.attrs.items() if k != "stage"}
    if s0 is not None and s1 is not None and st is not None:
        trips = max(0, -(-(s1 - s0) // st))
        stages = min(stages, max(trips, 1))  # more stages than iterations: one step runs them all
        main_stop: Expr = _const(s0 + (trips // stages) * stages * st, start)
        needs_tail = trips % stages != 0
    else:
        if stages > MAX_DYNAMIC_STAGES:
            raise PassError(f"pl.pipeline stage={stages} on a loop with a dynamic trip count would copy its "
                            f"body {stages} times; at most {MAX_DYNAMIC_STAGES} are supported", loop.span)
        main_stop = _main_stop(start, stop, step, stages)
        needs_tail = True

    body = flatten(loop.body)
    tail_yield = body[-1] if body and isinstance(body[-1], Yield) else None
    core = seq(body[:-1] if tail_yield else body, loop.body.span)

    j = Var(loop.loop_var.name, loop.loop_var.type, loop.loop_var.span)
    main_iter_args = [IterArg(a.name, a.type, a.init, a.span) for a in loop.iter_args]
    carried: list[Expr] = list(main_iter_args)
    copies: list[Stmt] = []
    for k in range(stages):
        offset = _const(k * st, step) if st is not None else Mul(_const(k, step), step)
        index = j if k == 0 else Add(j, offset)
        mapping = {loop.loop_var: index, **dict(zip(loop.iter_args, carried))}
        copy, full = clone_fresh(core, mapping)
        copies.append(copy)
        if tail_yield is not None:
            carried = [VarRewriter(full).expr(v) for v in tail_yield.values]
    if tail_yield is not None:
        copies.append(Yield(carried, tail_yield.span))
    main_rvs = list(loop.return_vars)
    if needs_tail:
        main_rvs = [Var(v.name, v.type, v.span) for v in loop.return_vars]
    step_f = _const(stages * st, step) if st is not None else Mul(_const(stages, step), step)
    main = For(j, start, main_stop, step_f, seq(copies, loop.body.span), main_iter_args, main_rvs,
               ForKind.Sequential, attrs, loop.span)
    if not needs_tail:
        return main
    tail_iter_args = [IterArg(a.name, a.type, rv, a.span) for a, rv in zip(loop.iter_args, main_rvs)]
    tail_body, _ = clone_fresh(loop.body, dict(zip(loop.iter_args, tail_iter_args)))
    tail_var = Var(loop.loop_var.name, loop.loop_var.type, loop.loop_var.span)
    tail_body = VarRewriter({loop.loop_var: tail_var}).stmt(tail_body)
    tail = For(tail_var, main_stop, stop, step, tail_body, tail_iter_args, loop.return_vars,
               ForKind.Sequential, attrs, loop.span)
    return seq([main, tail], loop.span)


@register_pass
class LowerPipelineLoops(FunctionPass):
    name = "LowerPipelineLoops"
    required = frozenset({"SSAForm"})
    produced = frozenset({"PipelineLoopsLowered"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not any(_is_pipeline(s) for s in walk_stmts(fn.body)):
            return fn
        return fn.replace(body=_Lower().stmt(fn.body))


def check_pipeline_lowered(program: Program) -> None:
    for fn in program.functions.values():
        for s in walk_stmts(fn.body):
            if _is_pipeline(s):
                raise PassError(f"pl.pipeline loop in {fn.name!r} has not been lowered", s.span)


register_property("PipelineLoopsLowered", check_pipeline_lowered, "no pl.pipeline loop is left")
