"""ExpandMixedKernel: an InCore function becomes the kernels of one core group.

A function with only vector work becomes an AIV kernel, one with only cube work an AIC
kernel. A function mixing both is split into `<name>_aic` (the cube statements) and
`<name>_aiv` (the vector statements) plus a Group function keeping the original name
and signature, which calls both. Scalar work and control flow are kept on both sides.

Every tile produced on one side and read on the other crosses on the core group's pipe:
the producer pushes it (`tile.tpush_to_aiv` / `tile.tpush_to_aic`), the consumer pops it
(`tile.tpop_from_aic` / `tile.tpop_from_aiv`) at the same program point, and frees the
slot after its last use in that block (`tile.tfree_to_aic` / `tile.tfree_to_aiv`). A tile
whose only cross-side use is a `tile.move` crosses at that move. The named crossings of a
`split_aiv` region (`aiv_shard` / `aic_gather`) become a push / pop pair with the region's
split code (3 / 4 over an odd extent: halves rounded up, lane 1 one short); the region
itself becomes its body on the AIV side, with the lane index bound by
`tile.get_subblock_idx()`. A popped tile keeps the valid region of what was pushed (a
narrowed one travels in the pop's type), a lane's half of a cube tile its share
`min(max(valid - lane * half, 0), half)` of it, and a tile gathered back from the lanes'
shares of a cube tile (through ops that keep valid regions) that tile's valid region.
Each crossing has its own pipe: crossings in one direction are numbered in definition
order (the `id` of the push / pop / free; 0, the default, is left out), so tiles of
different sizes never share a pipe's slots. A DDR tensor stored by one side
and loaded by the other is ordered by a fence token on a pipe of its own
(`analysis/ddr_fences.py`). A scalar computed by one side's work and read by the other's
is an error naming it (only tiles travel on the pipes).
"""

from __future__ import annotations

from typing import Any

from ..ir.enums import FunctionType, MemorySpace
from ..ir.expr import Call, ConstInt, Expr, GlobalVar, TupleGetItem, Var
from ..ir.function import Function, Program
from ..ir.ops import make_call
from ..ir.ops.common import VOID
from ..ir.ops.registry import Op
from ..ir.stmt import (
    Assign,
    Eval,
    For,
    If,
    Return,
    Scope,
    SeqStmts,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    flatten,
    seq,
    trailing_yield,
)
from ..ir.types import TensorType, TileType, TupleType, dim_value, shapes_equal
from .analysis.core_affinity import SPLIT_CODE, Side, leaf_call, runs_on, stmt_side
from .analysis.ddr_fences import Fence, Fences, ddr_fences
from .analysis.lane_share import lane_share
from .analysis.memory_effects import alias_roots
from .analysis.outliner import global_dims
from .analysis.type_propagation import Retyper
from .analysis.var_rewrite import VarRewriter, block, with_block_bodies
from .analysis.var_uses import calls_in, defined_vars, expr_vars, free_vars, stmt_exprs, used_vars, walk_stmts
from .diagnostics import PassError
from .framework import Pass, register_pass
from .properties import register_property

OTHER = {Side.CUBE: Side.VECTOR, Side.VECTOR: Side.CUBE}
PUSH = {Side.CUBE: "tile.tpush_to_aiv", Side.VECTOR: "tile.tpush_to_aic"}
POP = {Side.CUBE: "tile.tpop_from_aiv", Side.VECTOR: "tile.tpop_from_aic"}  # by consumer side
POP_MEMORY = {Side.CUBE: MemorySpace.Mat, Side.VECTOR: MemorySpace.Vec}
SPLIT_AXIS = {1: 0, 3: 0, 2: 1, 4: 1}  # split code (3, 4: over an odd extent) -> axis
FREE = {Side.CUBE: "tile.tfree_to_aiv", Side.VECTOR: "tile.tfree_to_aic"}
EXPLICIT = ("tile.aiv_shard", "tile.aic_gather")
RECEIVER = {"tile.aiv_shard": Side.VECTOR, "tile.aic_gather": Side.CUBE}


def _is_tile(v: Any) -> bool:
    return isinstance(v, Var) and isinstance(v.type, TileType)


class _Analysis:
    """Sides of definitions and the tiles that cross between the sides."""

    def __init__(self, fn: Function, fences: Fences | None = None) -> None:
        self.fences = fences or Fences()
        self.defs = {s.var: s.value for s in walk_stmts(fn.body) if isinstance(s, Assign)}
        self.def_side: dict[Var, Side] = {}
        self.sides: set[Side] = set()
        for s in walk_stmts(fn.body):
            call = leaf_call(s)
            if call is None:
                continue
            side = stmt_side(s)
            self.sides.add(side)
            if isinstance(s, Assign):  # a named crossing's result lives on the receiving side
                self.def_side[s.var] = RECEIVER.get(call.op.name, side)
        # carried tiles and branch results live where their yields are produced (inner first)
        for s in reversed(list(walk_stmts(fn.body))):
            if isinstance(s, (For, While)):
                y = trailing_yield(s.body)
                for i, (a, rv) in enumerate(zip(s.iter_args, s.return_vars)):
                    side = self.side_of(y.values[i]) if y is not None else self.side_of(a.init)
                    if _is_tile(a) and side is Side.BOTH:
                        side = self.side_of(a.init)
                    self.def_side[a] = self.def_side[rv] = side
            elif isinstance(s, If):
                ys = [y for b in (s.then_body, s.else_body) if b is not None and (y := trailing_yield(b))]
                for i, rv in enumerate(s.return_vars):
                    sides = {self.side_of(y.values[i]) for y in ys if i < len(y.values)} - {Side.BOTH}
                    if _is_tile(rv) and len(sides) == 1:
                        self.def_side[rv] = sides.pop()
        # a crossing is a tile defined on one side and read by a statement of the other;
        # `at_use` holds the crossings whose only cross-side reader is a tile.move
        uses: dict[Var, list[Stmt]] = {}
        for s in walk_stmts(fn.body):
            call = leaf_call(s)
            side = stmt_side(s) if call is not None else Side.BOTH
            if side is Side.BOTH or (call is not None and call.op.name in EXPLICIT):
                continue
            for e in stmt_exprs(s):
                for v in expr_vars(e):
                    if _is_tile(v) and self.def_side.get(v) is OTHER[side]:
                        uses.setdefault(v, []).append(s)
        self.crossing: set[Var] = set(uses)
        self.at_use: dict[Stmt, Var] = {}
        for v, readers in uses.items():
            if len(readers) == 1 and leaf_call(readers[0]).op.name == "tile.move":
                self.at_use[readers[0]] = v
        self.cross_at_def = self.crossing - set(self.at_use.values())
        named = {s.var: OTHER[RECEIVER[leaf_call(s).op.name]] for s in walk_stmts(fn.body)
                 if isinstance(s, Assign) and leaf_call(s) is not None and leaf_call(s).op.name in EXPLICIT}
        self.pipe_id: dict[Var, int] = {}
        counts = {Side.CUBE: 0, Side.VECTOR: 0}
        for v in defined_vars(fn.body):
            producer = named.get(v) or (self.def_side[v] if v in self.crossing else None)
            if producer is not None:
                self.pipe_id[v] = counts[producer]
                counts[producer] += 1
        for fence in self.fences.all():
            self.pipe_id[fence.token] = counts[fence.writer]
            counts[fence.writer] += 1

    def shard_source(self, e: Expr) -> Expr | None:
        """The cube tile an `aiv_shard` sent, where `e` follows from its result through ops
        that keep the shape and valid region of their first tile operand (None: elsewhere)."""
        while True:
            call = self.defs.get(e) if isinstance(e, Var) else e
            if not isinstance(call, Call) or not isinstance(call.op, Op):
                return None
            if call.op.name == "tile.aiv_shard":
                return call.args[0]
            operand = next((a for a in call.args if isinstance(getattr(a, "type", None), TileType)), None)
            if operand is None or not (shapes_equal(operand.type.shape, e.type.shape) and
                                       shapes_equal(operand.type.effective_valid_shape,
                                                    e.type.effective_valid_shape)):
                return None
            e = operand

    def side_of(self, e: Expr) -> Side:
        return self.def_side.get(e, Side.BOTH) if isinstance(e, Var) else Side.BOTH


class _Projector(Retyper):
    """The statements of one side, with pipe transfers at every crossing."""

    def __init__(self, info: _Analysis, side: Side, aliases: dict[Var, Var]) -> None:
        super().__init__(fresh=True)
        self.info, self.side, self.aliases = info, side, aliases
        self.pops: list[Var] = []
        self.lane: Var | None = None  # the AIV lane index, bound at a split_aiv region's top
        self.free_kwargs: dict[Var, dict[str, Any]] = {}

    # -- pipe transfers ---------------------------------------------------------
    def pipe_kwargs(self, crossing: Var, **kwargs: Any) -> dict[str, Any]:
        ident = self.info.pipe_id[crossing]
        return {**kwargs, "id": ident} if ident else kwargs

    def push(self, crossing: Var, split: int, value: Expr | None = None) -> Stmt:
        """Push `value` (default: the crossing tile itself) on `crossing`'s pipe."""
        value = crossing if value is None else value
        return Eval(make_call(PUSH[self.side], [self.expr(value)], self.pipe_kwargs(crossing, split=split),
                              crossing.span), crossing.span)

    def pop(self, v: Var, split: int, t: TileType | None = None) -> list[Stmt]:
        """Receive `v` (as a tile of type `t`, by default `v`'s own). A narrowed valid region
        travels in the pop's type (the reference's typed pop), else shape and dtype do."""
        t = v.type if t is None else t
        valid = [self.expr(e) for e in t.effective_valid_shape]
        if all(dim_value(e) == dim_value(d) is not None for e, d in zip(valid, t.shape)):
            call = make_call(POP[self.side], [], self.pipe_kwargs(v, shape=list(t.shape), dtype=t.dtype,
                                                                  split=split), v.span)
        else:
            call = make_call(POP[self.side], [], self.pipe_kwargs(v, split=split), v.span)
            call = call.replace(type=TileType(t.shape, t.dtype, POP_MEMORY[self.side], valid))
        popped = Var(v.name, call.type, v.span)
        self.mapping[v] = popped
        self.pops.append(popped)
        # the cube frees both lanes' slots of a split pop, so its free carries the split too
        free_split = {"split": split} if split and self.side is Side.CUBE else {}
        self.free_kwargs[popped] = self.pipe_kwargs(v, **free_split)
        return [Assign(popped, call, v.span)]

    def lane_pop(self, v: Var, full: TileType, split: int) -> list[Stmt]:
        """A lane's half of the cube tile `full`, valid on its share of `full`'s valid region
        along the split axis."""
        axis = SPLIT_AXIS[split]
        extent = dim_value(full.shape[axis])
        if extent is None:
            return self.pop(v, split)
        bind, share = lane_share(self.expr(full.effective_valid_shape[axis]), extent, self.lane, v.span)
        valid = list(full.effective_valid_shape)
        valid[axis] = share
        t: TileType = v.type
        return [*bind, *self.pop(v, split, TileType(t.shape, t.dtype, None, valid))]

    def transfer(self, v: Var, produced_here: bool, split: int = 0) -> list[Stmt]:
        return [self.push(v, split)] if produced_here else self.pop(v, split)

    # -- statements -------------------------------------------------------------
    def stmt_SeqStmts(self, s: SeqStmts) -> Stmt:
        out: list[Stmt] = []
        start = len(self.pops)
        for x in s.stmts:
            out.extend(self.project(x))
        fresh_pops, self.pops = self.pops[start:], self.pops[:start]
        for p in fresh_pops:
            _insert_free(out, p, FREE[self.side], self.free_kwargs[p])
        return seq(out, s.span) if out else SeqStmts([], s.span)

    def project(self, s: Stmt) -> list[Stmt]:
        fences = self.info.fences
        out = [x for f in fences.before.get(id(s), ()) if f.writer is not self.side
               for x in self.fence_pop(f)]
        out += self.project_one(s)
        fence = fences.after.get(id(s))
        if fence is not None and fence.writer is self.side:
            out += [self.stmt(fence.source), self.push(fence.token, 0)]
        return out

    def fence_pop(self, fence: Fence) -> list[Stmt]:
        """Wait for `fence`'s token and free its slot at once (it orders, it carries nothing)."""
        t: TileType = fence.token.type
        call = make_call(POP[self.side], [], self.pipe_kwargs(fence.token, shape=list(t.shape), dtype=t.dtype,
                                                              split=0), fence.token.span)
        popped = Var(fence.token.name, call.type, fence.token.span)
        free = make_call(FREE[self.side], [popped], self.pipe_kwargs(fence.token), fence.token.span)
        return [Assign(popped, call, popped.span), Eval(free, popped.span)]

    def project_one(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, (SeqStmts,)):
            return flatten(self.stmt(s))
        if isinstance(s, (For, While, If)):
            return self.compound(s)
        if isinstance(s, SplitAivScope):
            return self.region(s)
        if isinstance(s, Scope):
            return self.inline(s.body)
        call = leaf_call(s)
        if call is None:
            return [self.stmt(s)]
        if call.op.name in EXPLICIT:
            return self.named_crossing(s, call)
        side = stmt_side(s)
        out: list[Stmt] = []
        crossing = self.info.at_use.get(s)
        if crossing is not None:  # the other side's tile arrives here, at the move
            out += self.transfer(crossing, self.info.def_side[crossing] is self.side)
        if side is Side.BOTH and not runs_on(call, self.side):
            return out
        if side is Side.BOTH or side is self.side:
            new = self.stmt(s)
            if crossing is not None and self.side is Side.VECTOR and call.kwargs.get("target_memory") \
                    is MemorySpace.Vec:
                popped = self.mapping[crossing]  # pops land in Vec already: no move needed
                self.mapping[s.var] = popped
                return out
            out.append(new)
            if isinstance(s, Assign) and s.var in self.info.cross_at_def:
                out += self.transfer(s.var, True)
            return out
        # the other side's statement: keep only what this side must see of it
        if isinstance(s, Assign):
            if s.var in self.info.cross_at_def:
                out += self.transfer(s.var, False)
            elif isinstance(s.var.type, TensorType) and s.var in self.aliases:
                self.mapping[s.var] = self.expr(self.aliases[s.var])
        return out

    def named_crossing(self, s: Stmt, call: Call) -> list[Stmt]:
        split = SPLIT_CODE[call.kwargs.get("mode").name] if call.kwargs.get("mode") else 0
        src = call.args[0]
        shard = call.op.name == "tile.aiv_shard"
        producer = Side.CUBE if shard else Side.VECTOR
        assert isinstance(s, Assign)
        full = src.type if shard else s.var.type
        if split and dim_value(full.shape[SPLIT_AXIS[split]]) % 2:
            split += 2  # the reference's odd codes: lane 1 one short of the larger half
        if self.side is producer:
            return [self.push(s.var, split, src)]
        if shard:
            return self.lane_pop(s.var, src.type, split) if split else self.pop(s.var, split)
        return self.pop(s.var, split, self.rejoined(s.var, src, split))

    def rejoined(self, v: Var, half: Expr, split: int) -> TileType:
        """The type of `v`, the gather of `half`: valid on the valid region of the cube tile
        whose lanes' shares `half` holds, where `half` follows from a shard of one by ops that
        keep its valid region (the lanes' shares rejoin to it), else `v`'s own."""
        t: TileType = v.type
        source = self.info.shard_source(half)
        if not split or source is None or not shapes_equal(source.type.shape, t.shape):
            return t
        valid = list(t.effective_valid_shape)
        valid[SPLIT_AXIS[split]] = source.type.effective_valid_shape[SPLIT_AXIS[split]]
        return TileType(t.shape, t.dtype, t.memory_space, valid, t.view)

    def region(self, s: SplitAivScope) -> list[Stmt]:
        if self.side is Side.VECTOR:
            lane = self.lane = Var(s.lane_var.name, s.lane_var.type, s.lane_var.span)
            self.mapping[s.lane_var] = lane
            bind = Assign(lane, make_call("tile.get_subblock_idx", span=s.span), s.span)
            return [bind, *self.inline(s.body)]
        self.mapping[s.lane_var] = ConstInt(0)
        return self.inline(s.body)

    def inline(self, body: Stmt) -> list[Stmt]:
        """A region's statements projected into the enclosing block (its pops are freed there)."""
        return [x for st in flatten(body) for x in self.project(st)]

    def compound(self, s: For | While | If) -> list[Stmt]:
        if not _has_work(s, self.side, self.info):
            for rv in s.return_vars:  # a DDR tensor the other side writes is the same memory here
                if isinstance(rv.type, TensorType) and rv in self.aliases:
                    self.mapping[rv] = self.expr(self.aliases[rv])
            return []
        keep = [not _is_tile(v) or self.info.def_side.get(v, Side.BOTH) in (self.side, Side.BOTH)
                for v in s.return_vars]
        if not all(keep):
            s = _drop_carried(s, keep)
        new = self.stmt(with_block_bodies(s))
        out = [new]
        for rv in s.return_vars:
            if rv in self.info.cross_at_def:
                out += self.transfer(rv, self.info.def_side[rv] is self.side)
        return out


def _has_work(s: Stmt, side: Side, info: _Analysis) -> bool:
    """`s` holds statements or crossings of `side` (or only work both sides do)."""
    leaves = [x for x in walk_stmts(s) if leaf_call(x) is not None]
    if all(stmt_side(x) is Side.BOTH for x in leaves):
        return True
    for x in leaves:
        call = leaf_call(x)
        if stmt_side(x) is side or call.op.name in EXPLICIT or x in info.at_use:
            return True
        if isinstance(x, Assign) and x.var in info.cross_at_def:
            return True
    return any(v in info.cross_at_def for v in getattr(s, "return_vars", ()))


def _drop_carried(s: For | While | If, keep: list[bool]) -> Stmt:
    """`s` without the carried values this side does not hold."""
    def strip(body: Stmt) -> Stmt:
        stmts = flatten(body)
        if stmts and isinstance(stmts[-1], Yield):
            values = tuple(v for v, k in zip(stmts.pop().values, keep) if k)
            if values:
                stmts.append(Yield(values, body.span))
        return seq(stmts, body.span)

    rvs = tuple(v for v, k in zip(s.return_vars, keep) if k)
    if isinstance(s, If):
        return s.replace(then_body=strip(s.then_body),
                         else_body=None if s.else_body is None else strip(s.else_body), return_vars=rvs)
    ias = tuple(a for a, k in zip(s.iter_args, keep) if k)
    return s.replace(iter_args=ias, return_vars=rvs, body=strip(s.body))


def _insert_free(stmts: list[Stmt], popped: Var, op: str, kwargs: dict[str, Any]) -> None:
    """Free `popped`'s slot right after the last statement of `stmts` that reads it."""
    last = -1
    for i, s in enumerate(stmts):
        if any(popped in expr_vars(e) for x in walk_stmts(s) for e in stmt_exprs(x)):
            last = i
    if last < 0 or isinstance(stmts[last], (Yield, Return)):
        return
    stmts.insert(last + 1, Eval(make_call(op, [popped], kwargs, popped.span), popped.span))


def _kernel(fn: Function, name: str, side: Side, info: _Analysis, aliases: dict[Var, Var],
            returns: list[int]) -> Function:
    proj = _Projector(info, side, aliases)
    params = [proj.bind(p) for p in fn.params]
    body = flatten(proj.stmt(block(fn.body)))
    if body and isinstance(body[-1], Return):
        ret = body.pop()
        if returns:
            body.append(ret.replace(values=tuple(ret.values[i] for i in returns)))
    ftype = FunctionType.AIC if side is Side.CUBE else FunctionType.AIV
    return Function(name, params, fn.param_directions, [fn.return_types[i] for i in returns],
                    seq(body, fn.body.span), ftype, fn.level, fn.role, fn.attrs, fn.span)


def expand(fn: Function) -> list[Function]:
    info = _Analysis(fn)
    aliases = alias_roots(fn.body, {})
    if Side.CUBE in info.sides and Side.VECTOR in info.sides:
        info = _Analysis(fn, ddr_fences(fn, aliases))
    if Side.CUBE not in info.sides:
        everything = list(range(len(fn.return_types)))
        if not _uses_lanes(fn):
            return [_kernel(fn, fn.name, Side.VECTOR, info, {}, everything)]
        aiv = _kernel(fn, f"{fn.name}_aiv", Side.VECTOR, info, {}, everything)
        return [aiv, _group(fn, None, aiv, [], everything)]
    if Side.VECTOR not in info.sides:
        return [_kernel(fn, fn.name, Side.CUBE, info, {}, list(range(len(fn.return_types))))]
    ret = next((s for s in reversed(flatten(fn.body)) if isinstance(s, Return)), None)
    values = list(ret.values) if ret is not None else []
    cube = [i for i, v in enumerate(values) if info.side_of(v) is Side.CUBE]
    vector = [i for i in range(len(values)) if i not in cube]
    aic = _kernel(fn, f"{fn.name}_aic", Side.CUBE, info, aliases, cube)
    aiv = _kernel(fn, f"{fn.name}_aiv", Side.VECTOR, info, aliases, vector)
    aic = _scalars_from_one_side(fn, aic, Side.CUBE)
    aiv = _scalars_from_one_side(fn, aiv, Side.VECTOR)
    return [aic, aiv, _group(fn, aic, aiv, cube, vector)]


def _scalars_from_one_side(fn: Function, kernel: Function, side: Side) -> Function:
    """`kernel` without the duplicated scalar arithmetic it does not need; a scalar computed by
    the other side's work and still read here is an error (only tiles travel on the pipes)."""
    while True:
        missing = [v for v in free_vars(kernel.body) if v not in kernel.params and v not in global_dims(fn)]
        if not missing:
            return kernel
        used = used_vars(kernel.body)
        unused = {s.var for s in walk_stmts(kernel.body)
                  if isinstance(s, Assign) and not isinstance(s.value, Call) and s.var not in used}
        if not unused:
            break
        kernel = kernel.replace(body=_without_bindings(kernel.body, unused))
    v = missing[0]
    reader = next(s for s in walk_stmts(kernel.body) for e in stmt_exprs(s) if v in expr_vars(e))
    where = next((f" (line {s.span.begin_line})" for s in walk_stmts(fn.body)
                  if isinstance(s, Assign) and s.var is v and s.span is not None), "")
    kind = "tensor" if isinstance(v.type, TensorType) else "scalar"
    raise PassError(f"{kind} {v.name!r} is computed by {OTHER[side].value} work{where} and read in the "
                    f"{side.value} kernel of {fn.name!r}; only tiles cross between the AIC and AIV "
                    f"kernels: compute the scalar on the {side.value} side too (from data it loads "
                    f"itself), or keep its producer and its readers on one side", reader.span)


def _without_bindings(s: Stmt, dead: set[Var]) -> Stmt:
    if isinstance(s, SeqStmts):
        kept = [_without_bindings(x, dead) for x in s.stmts if not (isinstance(x, Assign) and x.var in dead)]
        return s.replace(stmts=tuple(kept))
    if isinstance(s, If):
        return s.replace(then_body=_without_bindings(s.then_body, dead),
                         else_body=None if s.else_body is None else _without_bindings(s.else_body, dead))
    if isinstance(s, (For, While, Scope)):
        return s.replace(body=_without_bindings(s.body, dead))
    return s


def _uses_lanes(fn: Function) -> bool:
    """The vector work is split over the AIV lanes (a `split_aiv` region, or code reading its
    lane with `tile.get_subblock_idx`): it must run once per lane, as a Group's AIV member."""
    return any(isinstance(s, SplitAivScope) for s in walk_stmts(fn.body)) or any(
        c.op.name == "tile.get_subblock_idx" for c in calls_in(fn.body) if not isinstance(c.op, GlobalVar))


def _group(fn: Function, aic: Function | None, aiv: Function, cube: list[int], vector: list[int]) -> Function:
    """The Group function keeping `fn`'s name: it calls its AIC kernel (if any) and its AIV kernel,
    which the runtime starts together, the AIV one on every lane."""
    rw = VarRewriter(fresh=True)
    params = [rw.bind(p) for p in fn.params]
    stmts: list[Stmt] = []
    results: dict[int, Expr] = {}
    for kernel, positions in ((aic, cube), (aiv, vector)):
        if kernel is None:
            continue
        rtype = kernel.return_types[0] if len(positions) == 1 else TupleType(kernel.return_types) \
            if positions else VOID
        call = Call(GlobalVar(kernel.name, fn.span), params, {}, rtype, fn.span)
        if not positions:
            stmts.append(Eval(call, fn.span))
            continue
        r = Var(f"{kernel.name}_out", rtype, fn.span)
        stmts.append(Assign(r, call, fn.span))
        if len(positions) == 1:
            results[positions[0]] = r
        else:
            for k, i in enumerate(positions):
                v = Var(f"r{i}", fn.return_types[i], fn.span)
                stmts.append(Assign(v, TupleGetItem(r, k, fn.span), fn.span))
                results[i] = v
    if results:
        stmts.append(Return([results[i] for i in range(len(results))], fn.span))
    return Function(fn.name, params, fn.param_directions, fn.return_types, seq(stmts, fn.span),
                    FunctionType.Group, fn.level, fn.role, fn.attrs, fn.span)


@register_pass
class ExpandMixedKernel(Pass):
    name = "ExpandMixedKernel"
    required = frozenset({"TileMemoryInferred"})
    produced = frozenset({"MixedKernelExpanded"})

    def run(self, program: Program) -> Program:
        out: list[Function] = []
        changed = False
        for fn in program.functions.values():
            if fn.func_type is FunctionType.InCore and is_single_core(fn):
                _check_single_core(fn)
                out.append(fn)
            elif fn.func_type is FunctionType.InCore:
                out.extend(expand(fn))
                changed = True
            else:
                out.append(fn)
        return program.with_functions(out) if changed else program


SINGLE_CORE = "single_core"
"""InCore attribute (`@pl.jit.incore(single_core=True)`): one core runs the kernel's cube and
vector work, with no AIC / AIV split, no pipes and no second vector lane. Only plang's
simulated chip, whose cores are host threads, can: the reference splits every mixed kernel."""


def is_single_core(fn: Function) -> bool:
    return bool(fn.attrs.get(SINGLE_CORE)) if fn.attrs else False


def _check_single_core(fn: Function) -> None:
    """A single-core kernel has no AIV lanes and no pipes to use."""
    lanes = _uses_lanes(fn)
    pipe = next((c for c in calls_in(fn.body) if not isinstance(c.op, GlobalVar)
                 and c.op.name.startswith(("tile.tpush", "tile.tpop", "tile.tfree"))), None)
    if lanes or pipe is not None:
        what = "AIV lanes (a split_aiv region or tile.get_subblock_idx)" if lanes else pipe.op.name
        raise PassError(f"single-core kernel {fn.name!r} uses {what}: one core runs it whole, with "
                        "no AIV lanes or pipes; drop single_core=True", pipe.span if pipe else fn.span)


def check_expanded(program: Program) -> None:
    for fn in program.functions.values():
        if fn.func_type is FunctionType.InCore and not is_single_core(fn):
            raise PassError(f"InCore function {fn.name!r} has not been split into AIC / AIV kernels",
                            fn.span)
        for s in walk_stmts(fn.body):
            if isinstance(s, SplitAivScope):
                raise PassError(f"split_aiv region left in {fn.name!r}", s.span)


register_property("MixedKernelExpanded", check_expanded,
                  "InCore functions are AIC / AIV kernels (and Group functions), unless single-core; "
                  "no split_aiv region is left")
