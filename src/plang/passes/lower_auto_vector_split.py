"""LowerAutoVectorSplit: `pl.at(..., optimizations=[pl.split(mode)])` becomes explicit
`split_aiv` regions.

In an InCore function whose `split` attribute is UP_DOWN or LEFT_RIGHT, every maximal
run of vector statements (in each block, recursing into loops and branches that mix cube
and vector work) becomes a `for lane in pl.split_aiv(2, mode=...)` region in which each
AIV lane computes its half of every tile: loads, stores and allocations take half the
rows (UP_DOWN) or columns (LEFT_RIGHT) at offset `lane * half` (an odd extent halves
rounded up, lane 1 one short), a load valid on its lane's share of its valid region
(`min(max(valid - lane * half, 0), half)`), and every other op follows by type deduction,
so a vector tile defined in an earlier region enters later ones already halved. A cube
tile entering a region (the `tile.move` to Vec, whether its source is a cube op's result or
a loop / branch result held in cube memory) becomes `tile.aiv_shard`; a region tile a cube
statement reads leaves through `tile.aic_gather`, valid on the whole tile's valid region
(the lanes' shares rejoined). A reduction across the split axis cannot be halved and is
an error.
`pl.split(NONE)` needs no region: both lanes already run the whole vector body.
"""

from __future__ import annotations

from ..dtypes import INDEX
from ..ir.enums import FunctionType, MemorySpace, SplitMode
from ..ir.expr import Add, Call, ConstInt, Expr, MakeTuple, Mul, Sub, Var
from ..ir.function import Function, Program
from ..ir.node import freeze_attrs
from ..ir.ops import make_call
from ..ir.ops.common import fmt_shape
from ..ir.stmt import Assign, Return, SeqStmts, SplitAivScope, Stmt, Yield, seq
from ..ir.types import ScalarType, TileType, dim_value, shapes_equal
from .analysis.core_affinity import Side, leaf_call, stmt_side
from .analysis.lane_share import halved_reshape, lane_share
from .analysis.type_propagation import Retyper, rebuild_call
from .analysis.var_rewrite import block, with_block_bodies
from .analysis.var_uses import defined_vars, expr_vars, stmt_exprs, walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property

# reductions that combine values across the split axis
CUBE_MEMORY = {MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc}
ACROSS = {SplitMode.UP_DOWN: "col_", SplitMode.LEFT_RIGHT: "row_"}


def _sides(s: Stmt) -> set[Side]:
    return {stmt_side(x) for x in walk_stmts(s) if leaf_call(x) is not None}


def _kind(s: Stmt) -> str:
    """'V' vector-only, 'C' cube-only, 'M' mixed, 'S' scalar / structural."""
    if isinstance(s, (Yield, Return)):
        return "S"
    sides = _sides(s) - {Side.BOTH}
    if sides == {Side.VECTOR}:
        return "V"
    if sides == {Side.CUBE}:
        return "C"
    return "M" if sides else "S"


def _is_tile(v) -> bool:
    return isinstance(v, Var) and isinstance(v.type, TileType)


class _Splitter(Retyper):
    def __init__(self, fn: Function, mode: SplitMode) -> None:
        super().__init__()
        self.fn, self.mode = fn, mode
        self.axis = 0 if mode is SplitMode.UP_DOWN else 1
        self.lane: Var | None = None
        self.before: list[Stmt] = []  # lane shares bound ahead of the current statement
        self.vector_defs: set[Var] = set()
        self.cube_defs: set[Var] = set()
        self.cube_reads: set[Var] = set()
        for s in walk_stmts(fn.body):
            side = stmt_side(s) if leaf_call(s) is not None else Side.BOTH
            if isinstance(s, Assign) and _is_tile(s.var) and side is not Side.BOTH:
                (self.vector_defs if side is Side.VECTOR else self.cube_defs).add(s.var)
            if side is Side.CUBE:
                self.cube_reads.update(v for e in stmt_exprs(s) for v in expr_vars(e) if _is_tile(v))

    # -- regions ---------------------------------------------------------------------
    def stmt_SeqStmts(self, s: SeqStmts) -> Stmt:
        if self.lane is not None:  # already inside a region
            return seq([self.stmt(x) for x in s.stmts], s.span)
        kinds = [_kind(x) for x in s.stmts]
        out: list[Stmt] = []
        i = 0
        while i < len(s.stmts):
            if kinds[i] != "V":
                out.append(self.stmt(with_block_bodies(s.stmts[i])))
                i += 1
                continue
            j = i
            while j + 1 < len(s.stmts) and kinds[j + 1] in ("V", "S"):
                j += 1
            while kinds[j] != "V":
                j -= 1
            out.append(self.region(list(s.stmts[i:j + 1])))
            i = j + 1
        return seq(out, s.span) if out else s

    def region(self, stmts: list[Stmt]) -> Stmt:
        span = stmts[0].span
        lane = self.lane = Var("lane", ScalarType(INDEX), span)
        body = [self.stmt(with_block_bodies(x)) for x in stmts]
        self.lane = None
        gathers = []
        for x in stmts:
            for v in defined_vars(x):
                if v in self.cube_reads and v in self.mapping:
                    call = make_call("tile.aic_gather", [self.mapping[v]], {"mode": self.mode}, span)
                    t = call.type
                    if not shapes_equal(t.shape, v.type.shape):
                        raise PassError(f"pl.split({self.mode.name}) in {self.fn.name!r}: tile {v.name!r} of "
                                        f"odd extent {fmt_shape(v.type.shape)} on axis {self.axis} is read "
                                        "by cube work; its lane halves cannot be rejoined", span)
                    # the lanes' shares rejoin to the whole tile's valid region
                    vt = v.type
                    full = Var(v.name, TileType(t.shape, t.dtype, vt.memory_space, vt.valid_shape), span)
                    gathers.append(Assign(full, call, span))
                    self.mapping[v] = full
        return SplitAivScope(self.mode, lane, seq([*body, *gathers], span), span)

    # -- halving -----------------------------------------------------------------------
    def half(self, extent: Expr, span) -> Expr:
        """Each lane's box on the split axis: half a static extent, rounded up (an odd extent
        leaves lane 1 one short, as the reference's ceil halving)."""
        n = dim_value(extent)
        if n is None:
            raise PassError(f"pl.split({self.mode.name}) in {self.fn.name!r} needs a static extent on "
                            f"axis {self.axis}, got {extent!r}", span)
        return ConstInt(-(-n // 2))

    def lane_valid(self, call: Call, span) -> Expr | None:
        """A load's valid_shape for this lane: its share of the load's valid extent on the
        split axis (`lane_share`; lane 1 one short of an odd extent), bound ahead of the
        load (None: the whole half)."""
        n = dim_value(call.args[2].elements[self.axis])
        valid = call.kwargs.get("valid_shape")
        box = [self.expr(e) for e in (valid.elements if valid is not None else call.args[2].elements)]
        bind, box[self.axis] = lane_share(box[self.axis], n, self.lane, span)
        if not bind and valid is None:
            return None
        self.before.extend(bind)
        return MakeTuple(box)

    def lane_extent(self, box, n: int, half: Expr) -> MakeTuple:
        """`box` with this lane's share of odd extent `n` on the split axis: n - lane * half."""
        elems = list(box)
        elems[self.axis] = Sub(ConstInt(n), Mul(self.lane, half))
        return MakeTuple(elems)

    def lane_window(self, store: Call, tile: Expr, span) -> Expr | None:
        """A store's `shapes` for this lane where an odd extent leaves lane 1 short (the
        tile's box with extent - lane * half on the split axis), else its own."""
        n, half = dim_value(store.args[0].type.shape[self.axis]), dim_value(tile.type.shape[self.axis])
        shapes = store.kwargs.get("shapes")
        if n is None or half is None or n == 2 * half:
            return shapes
        if shapes is not None or tile.type.rank != store.args[2].type.rank:
            raise PassError(f"pl.split({self.mode.name}) in {self.fn.name!r}: a store of odd extent {n} on "
                            f"axis {self.axis} needs a tile of the tensor's rank and no shapes=", span)
        return self.lane_extent(tile.type.shape, n, tile.type.shape[self.axis])

    def lane_offset(self, offsets: Expr, half: Expr) -> MakeTuple:
        elems = list(offsets.elements)
        shift = Mul(self.lane, half)
        elems[self.axis] = shift if dim_value(elems[self.axis]) == 0 else Add(elems[self.axis], shift)
        return MakeTuple(elems)

    def reshape(self, call: Call, span) -> Call:
        """A reshape of a lane's half (see `halved_reshape`)."""
        src = self.expr(call.args[0])
        target = halved_reshape(call.args[0].type.shape, src.type.shape, call.args[1].elements)
        if target is None:
            raise PassError(f"pl.split({self.mode.name}) in {self.fn.name!r}: tile.reshape of a "
                            f"{self.mode.name} half {fmt_shape(src.type.shape)} of "
                            f"{fmt_shape(call.args[0].type.shape)} to {fmt_shape(call.args[1].elements)}: "
                            "the lane's half is not a contiguous run of the tile, or the target has no "
                            "even leading axis to halve", span)
        return rebuild_call(call, input=src, shape=MakeTuple([ConstInt(d) for d in target]))

    def from_cube(self, src: Expr) -> bool:
        """A cube tile: defined by a cube op, or (a loop / branch result) held in cube memory."""
        return src in self.cube_defs or (_is_tile(src) and src.type.memory_space in CUBE_MEMORY)

    def stmt_Assign(self, s: Assign) -> Stmt:
        if self.lane is None or not isinstance(s.value, Call):
            return super().stmt_Assign(s)
        call = s.value
        name = call.op.name
        if name.startswith("tile." + ACROSS[self.mode]) and "expand" not in name:
            raise PassError(f"{name} reduces across the {self.mode.name} split axis; it cannot run on half "
                            f"a tile (use pl.split(pl.SplitMode.NONE) or the other split mode)", s.span)
        if name == "tile.move" and self.from_cube(call.args[0]):
            value = make_call("tile.aiv_shard", [self.expr(call.args[0])], {"mode": self.mode}, call.span)
        elif name == "tile.load":
            shapes = list(call.args[2].elements)
            shapes[self.axis] = self.half(shapes[self.axis], s.span)
            value = rebuild_call(call, tensor=self.expr(call.args[0]), shapes=MakeTuple(shapes),
                                 offsets=self.lane_offset(self.expr(call.args[1]), shapes[self.axis]),
                                 valid_shape=self.lane_valid(call, s.span))
        elif name in ("tile.create", "tile.full"):
            shape = list(call.args[0].elements)
            shape[self.axis] = self.half(shape[self.axis], s.span)
            value = rebuild_call(self.expr(call), shape=MakeTuple(shape))
        elif name == "tile.reshape" and not shapes_equal(self.expr(call.args[0]).type.shape,
                                                         call.args[0].type.shape):
            value = self.reshape(call, s.span)
        elif name == "tile.store":
            tile = self.expr(call.args[0])
            offsets = self.lane_offset(self.expr(call.args[1]), tile.type.shape[self.axis])
            value = rebuild_call(call, tile=tile, output_tensor=self.expr(call.args[2]), offsets=offsets,
                                 shapes=self.lane_window(call, tile, s.span))
        else:
            return super().stmt_Assign(s)
        var = self.retarget(s.var, value.type)
        new, self.before = [*self.before, Assign(var, value, s.span)], []
        return seq(new, s.span)


def split_function(fn: Function, mode: SplitMode) -> Function:
    attrs = freeze_attrs({k: v for k, v in fn.attrs.items() if k != "split"})
    if mode is SplitMode.NONE:
        return fn.replace(attrs=attrs)
    body = _Splitter(fn, mode).stmt(block(fn.body))
    return fn.replace(attrs=attrs, body=body)


@register_pass
class LowerAutoVectorSplit(FunctionPass):
    name = "LowerAutoVectorSplit"
    required = frozenset({"TileMemoryInferred"})
    produced = frozenset({"AutoVectorSplitLowered"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        mode = fn.attrs.get("split")
        if fn.func_type is not FunctionType.InCore or not isinstance(mode, SplitMode):
            return fn
        return split_function(fn, mode)


def check_split_lowered(program: Program) -> None:
    for fn in program.functions.values():
        if fn.func_type is FunctionType.InCore and "split" in fn.attrs:
            raise PassError(f"pl.split on {fn.name!r} has not been lowered to split_aiv regions", fn.span)


register_property("AutoVectorSplitLowered", check_split_lowered,
                  "`pl.split` optimizations are explicit split_aiv regions")
