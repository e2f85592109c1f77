"""SplitVectorKernel: a hand-written AIV kernel that declares a split is written at the full
tile shape; each AIV lane runs it on its half.

A kernel declares the split with a function `split` attribute (UP_DOWN / LEFT_RIGHT) or with
the `split=` code of its pipe ops (1 / 3 up-down, 2 / 4 left-right; all must agree, and agree
with the attribute). Its body gets `lane = tile.get_subblock_idx()` and becomes one lane's
code: a tile popped from the cube holds the lane's half along the split axis (UP_DOWN: rows,
LEFT_RIGHT: columns), its valid extent there the lane's share
`min(max(valid - lane * half, 0), half)`; loads and allocations take half the extent at
`lane * half`; stores move to the lane's half and `tile.set_validshape` extents to the lane's
share; a reshape of a half that is a contiguous run of the tile halves its target's leading
axis; every other op follows by type deduction. The kernel is then marked `split_aiv`
(already per-lane), which this pass leaves alone, as it leaves external kernels. AIC kernels
need no rewrite: the cube holds whole tiles and its push / pop split code divides them.
"""

from __future__ import annotations

from ..dtypes import INDEX
from ..ir.enums import FunctionType, SplitMode
from ..ir.expr import Add, Call, ConstInt, Expr, MakeTuple, Mul, Var
from ..ir.function import Function, Program
from ..ir.node import freeze_attrs
from ..ir.ops import make_call
from ..ir.stmt import Assign, SeqStmts, Stmt, flatten
from ..ir.types import ScalarType, TileType, dim_value
from .analysis.lane_share import halved_reshape, lane_share
from .analysis.type_propagation import Retyper, rebuild_call
from .analysis.var_rewrite import block
from .analysis.var_uses import calls_in
from .diagnostics import PassError
from .framework import FunctionPass, register_pass

PIPE_OPS = ("tile.tpush_to_aiv", "tile.tpush_to_aic", "tile.tpop_from_aiv", "tile.tpop_from_aic")
MODE_OF_CODE = {1: SplitMode.UP_DOWN, 3: SplitMode.UP_DOWN, 2: SplitMode.LEFT_RIGHT, 4: SplitMode.LEFT_RIGHT}
# reductions that combine values across the split axis, and ops whose extents name it
ACROSS = {SplitMode.UP_DOWN: "tile.col_", SplitMode.LEFT_RIGHT: "tile.row_"}
SHAPING = ("tile.slice", "tile.reshape", "tile.assemble", "tile.transpose", "tile.concat")


def split_mode(fn: Function) -> SplitMode | None:
    """The split `fn` declares (None: it runs whole on each lane it is launched on)."""
    declared = fn.attrs.get("split")
    inferred: SplitMode | None = None
    for call in calls_in(fn.body):
        if getattr(call.op, "name", None) not in PIPE_OPS:
            continue
        code = call.kwargs.get("split")
        mode = MODE_OF_CODE.get(int(getattr(code, "value", code) or 0))
        if mode is None:
            continue
        if inferred is not None and mode is not inferred:
            raise PassError(f"kernel {fn.name!r} mixes {inferred.name} and {mode.name} split codes on its "
                            "pipe ops", call.span)
        inferred = mode
        if isinstance(declared, SplitMode) and declared is not SplitMode.NONE and mode is not declared:
            raise PassError(f"kernel {fn.name!r} is declared split {declared.name} but this pipe op "
                            f"uses a {mode.name} split code", call.span)
    if isinstance(declared, SplitMode) and declared is not SplitMode.NONE:
        return declared
    return inferred


class _LaneSplitter(Retyper):
    """Rewrite a full-shape AIV body as the code of the lane bound to `lane`."""

    def __init__(self, fn: Function, mode: SplitMode, lane: Var) -> None:
        super().__init__()
        self.fn, self.mode, self.lane = fn, mode, lane
        self.axis = 0 if mode is SplitMode.UP_DOWN else 1
        self.before: list[Stmt] = []  # lane shares bound ahead of the current statement

    def stmt_SeqStmts(self, s: SeqStmts) -> Stmt:
        out: list[Stmt] = []
        for x in s.stmts:
            out.extend(flatten(self.stmt(x)))
        return SeqStmts(out, s.span)

    def half(self, extent: Expr, span) -> int:
        n = dim_value(extent)
        if n is None or n % 2:
            raise PassError(f"split {self.mode.name} kernel {self.fn.name!r} needs an even static extent on "
                            f"axis {self.axis}, got {extent!r}", span)
        return n // 2

    def share(self, valid: Expr, full: int, span) -> Expr:
        """The lane's part of a valid extent `valid` of a split axis `full` long."""
        bind, share = lane_share(valid, full, self.lane, span)
        self.before.extend(bind)
        return share

    def halved(self, t: TileType, span) -> TileType:
        shape, valid = list(t.shape), list(t.effective_valid_shape)
        full = 2 * self.half(shape[self.axis], span)
        shape[self.axis] = ConstInt(full // 2)
        valid[self.axis] = self.share(valid[self.axis], full, span)
        return TileType(shape, t.dtype, t.memory_space, valid, t.view)

    def shifted(self, offsets: Expr, half: Expr) -> MakeTuple:
        elems = list(offsets.elements)
        shift = Mul(self.lane, half)
        elems[self.axis] = shift if dim_value(elems[self.axis]) == 0 else Add(elems[self.axis], shift)
        return MakeTuple(elems)

    def halved_list(self, extents: Expr, span) -> MakeTuple:
        elems = list(extents.elements)
        elems[self.axis] = ConstInt(self.half(elems[self.axis], span))
        return MakeTuple(elems)

    def stmt_Assign(self, s: Assign) -> Stmt:
        new = self.rewrite(s)
        if not self.before:
            return new
        out, self.before = [*self.before, new], []
        return SeqStmts(out, s.span)

    def rewrite(self, s: Assign) -> Stmt:
        call = s.value
        if not isinstance(call, Call) or not isinstance(getattr(call.op, "name", None), str):
            return super().stmt_Assign(s)
        name = call.op.name
        if name == "tile.reshape":
            src = self.expr(call.args[0])
            target = halved_reshape(call.args[0].type.shape, src.type.shape, call.args[1].elements)
            if target is not None:
                value = rebuild_call(call, input=src, shape=MakeTuple([ConstInt(d) for d in target]))
                return Assign(self.retarget(s.var, value.type), value, s.span)
        if name.startswith(ACROSS[self.mode]) or name in SHAPING:
            raise PassError(f"{name} in split {self.mode.name} kernel {self.fn.name!r}: each lane holds half "
                            "of every tile, so this op cannot be split (write the kernel per lane, or drop "
                            "the split)", s.span)
        if name == "tile.tpop_from_aic" and isinstance(s.var.type, TileType):
            var = Var(s.var.name, self.halved(s.var.type, s.span), s.var.span)
            self.mapping[s.var] = var
            return Assign(var, call.replace(type=var.type), s.span)
        if name == "tile.load":
            shapes = self.halved_list(self.expr(call.args[2]), s.span)
            value = rebuild_call(call, tensor=self.expr(call.args[0]), shapes=shapes,
                                 offsets=self.shifted(self.expr(call.args[1]), shapes.elements[self.axis]))
            if call.kwargs.get("valid_shape") is not None:
                value = rebuild_call(value, valid_shape=self.shared_list(call.kwargs["valid_shape"], call, s))
        elif name in ("tile.create", "tile.full"):
            value = rebuild_call(self.expr(call), shape=self.halved_list(call.args[0], s.span))
            if call.kwargs.get("valid_shape") is not None:
                value = rebuild_call(value, valid_shape=self.shared_list(call.kwargs["valid_shape"], call, s))
        elif name == "tile.store":
            value = self.store(call)
        elif name == "tile.set_validshape":
            value = self.set_validshape(call, s)
        else:
            return super().stmt_Assign(s)
        return Assign(self.retarget(s.var, value.type), value, s.span)

    def shared_list(self, valid: Expr, call: Call, s: Assign) -> MakeTuple:
        full = dim_value((call.args[2] if call.op.name == "tile.load" else call.args[0]).elements[self.axis])
        elems = [self.expr(e) for e in valid.elements]
        elems[self.axis] = self.share(elems[self.axis], full, s.span)
        return MakeTuple(elems)

    def store(self, call: Call) -> Call:
        tile = self.expr(call.args[0])
        old, new = call.args[0].type.shape[self.axis], tile.type.shape[self.axis]
        offsets = self.expr(call.args[1])
        if dim_value(old) != dim_value(new):  # a half tile lands in the lane's half
            offsets = self.shifted(offsets, new)
        shapes = call.kwargs.get("shapes")
        return rebuild_call(call, tile=tile, offsets=offsets, output_tensor=self.expr(call.args[2]),
                            shapes=None if shapes is None else self.halved_list(self.expr(shapes), call.span))

    def set_validshape(self, call: Call, s: Assign) -> Call:
        tile = self.expr(call.args[0])
        full = dim_value(call.args[0].type.shape[self.axis])
        extents = [self.expr(call.args[1]), self.expr(call.args[2])]
        if dim_value(tile.type.shape[self.axis]) != full:
            extents[self.axis] = self.share(extents[self.axis], full, s.span)
        return rebuild_call(call, tile=tile, valid_rows=extents[0], valid_cols=extents[1])


def split_kernel(fn: Function, mode: SplitMode) -> Function:
    """`fn` (a full-shape AIV kernel) as per-lane code, marked `split_aiv`."""
    lane = Var("lane", ScalarType(INDEX), fn.span)
    body = _LaneSplitter(fn, mode, lane).stmt(block(fn.body))
    bind = Assign(lane, make_call("tile.get_subblock_idx", span=fn.span), fn.span)
    attrs = freeze_attrs({**{k: v for k, v in fn.attrs.items() if k != "split"}, "split_aiv": True})
    return fn.replace(attrs=attrs, body=SeqStmts([bind, *flatten(body)], fn.span))


@register_pass
class SplitVectorKernel(FunctionPass):
    name = "SplitVectorKernel"
    required = frozenset({"TileMemoryInferred"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if fn.func_type is not FunctionType.AIV or fn.attrs.get("split_aiv") \
                or fn.attrs.get("external_source"):
            return fn
        mode = split_mode(fn)
        return fn if mode is None else split_kernel(fn, mode)
