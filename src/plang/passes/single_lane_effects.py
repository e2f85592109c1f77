"""SingleLaneEffects: a no-split AIV kernel that shares a Group with a cube kernel writes DDR
from lane 0 only.

Such a kernel runs on both AIV lanes of its core group (the cube's split-0 pushes reach both,
and its split-0 pops take both lanes' copies), each lane computing the whole vector body. Its
effects must happen once, as on the reference's chips (one AIV lane, or a second lane that
replays the pipe handshakes with its stores suppressed): otherwise a read-modify-write of an
output (`c = c + a @ b`) is applied twice, racing. So the kernel gets
`lane = tile.get_subblock_idx()` and every tile op writing a DDR tensor (`tile.store`,
`tile.mscatter`) runs under `if lane == 0`; on lane 1 its result is the tensor unwritten.
Pipe ops and barriers still run on both lanes. A kernel that splits its work over the lanes
(a `split_aiv` kernel, or one reading its lane) is left alone.
"""

from __future__ import annotations

from ..dtypes import INDEX
from ..ir.enums import FunctionType
from ..ir.expr import Call, ConstInt, Eq, GlobalVar, Var
from ..ir.function import Function, Program
from ..ir.ops import make_call
from ..ir.stmt import Assign, Eval, If, SeqStmts, SplitAivScope, Stmt, Yield, flatten
from ..ir.types import ScalarType, TensorType
from .analysis.memory_effects import call_effects
from .analysis.var_rewrite import VarRewriter, block
from .analysis.var_uses import calls_in, walk_stmts
from .framework import Pass, register_pass


def _ddr_write(call) -> list:
    """The DDR tensors a tile op call writes (none for other calls)."""
    if not isinstance(call, Call) or isinstance(call.op, GlobalVar) or not call.op.name.startswith("tile."):
        return []
    _, writes = call_effects(call, {})
    return [w for w in writes if isinstance(w.type, TensorType)]


def _uses_lanes(fn: Function) -> bool:
    return bool(fn.attrs.get("split_aiv")) or any(isinstance(s, SplitAivScope) for s in walk_stmts(fn.body)) \
        or any(getattr(c.op, "name", None) == "tile.get_subblock_idx" for c in calls_in(fn.body))


def dual_lane_kernels(program: Program) -> set[str]:
    """Names of the AIV kernels that write DDR and run on both lanes only because a cube
    kernel shares their Group."""
    names: set[str] = set()
    for group in program.functions.values():
        if group.func_type is not FunctionType.Group:
            continue
        callees = [program.functions.get(c.op.name) for c in calls_in(group.body)
                   if isinstance(c.op, GlobalVar)]
        if not any(f is not None and f.func_type is FunctionType.AIC for f in callees):
            continue
        names.update(f.name for f in callees if f is not None and f.func_type is FunctionType.AIV
                     and not f.attrs.get("external_source") and not _uses_lanes(f)
                     and any(_ddr_write(c) for c in calls_in(f.body)))
    return names


class _Guard(VarRewriter):
    def __init__(self, lane: Var) -> None:
        super().__init__()
        self.lane = lane

    def lane0(self, span):
        return Eq(self.lane, ConstInt(0), span=span)

    def stmt_Eval(self, s: Eval) -> Stmt:
        new = super().stmt_Eval(s)
        return If(self.lane0(s.span), new, span=s.span) if _ddr_write(new.expr) else new

    def stmt_Assign(self, s: Assign) -> Stmt:
        new = super().stmt_Assign(s)
        written = _ddr_write(new.value)
        if not written or not isinstance(new.var.type, TensorType) or len(written) != 1:
            return new
        inner = Var(new.var.name, new.var.type, new.var.span)
        then = SeqStmts([Assign(inner, new.value, s.span), Yield([inner], s.span)], s.span)
        return If(self.lane0(s.span), then, Yield([written[0]], s.span), (new.var,), s.span)


def guard_effects(fn: Function) -> Function:
    lane = Var("lane", ScalarType(INDEX), fn.span)
    body = _Guard(lane).stmt(block(fn.body))
    bind = Assign(lane, make_call("tile.get_subblock_idx", span=fn.span), fn.span)
    return fn.replace(body=SeqStmts([bind, *flatten(body)], fn.span))


@register_pass
class SingleLaneEffects(Pass):
    name = "SingleLaneEffects"
    required = frozenset({"MixedKernelExpanded"})

    def run(self, program: Program) -> Program:
        targets = dual_lane_kernels(program)
        if not targets:
            return program
        return program.with_functions([guard_effects(fn) if fn.name in targets else fn
                                       for fn in program.functions.values()])
