"""DDR ↔ tile transfers: `tile.load` and `tile.store` (plus the DDR queries `tensor.dim`
and `tensor.read`).

A transfer moves a window of a rank-n DDR tensor: its leading n - 1 dims fold into tile rows
(row r ↔ their row-major multi-index), the last dim is the contiguous (unit-stride) column
axis. It covers the tile's valid region, which must lie inside the tensor (`checks.check_bounds`:
once per transfer, against the tensor's runtime extents; a load with ``clamp=True`` may
overhang the far edge and is clipped to it; a failed check moves nothing and raises). Rows
stream as vector transfers along the columns (masked for partial chunks); a load zero-fills
the rest of the tile so later ops never see stale data. A load whose single use fuses stays a `LazyTile` (its
chunks are read from DDR where they are consumed), and a store writes a lazy tile's chunks
straight to DDR. A store into a tensor of another dtype converts (tile.cast's default
rules). `atomic=pl.AtomicType.Add` adds the tile into DDR element by element with
atomic read-modify-writes, so concurrent blocks may add into the same window.
"""

from __future__ import annotations

import math
from typing import Sequence

from ... import ir as pir
from ...dtypes import BOOL, INDEX, INT64, DataType
from ...ir.enums import AtomicType
from ...passes.analysis.var_uses import expr_vars
from .builder import KernelBuilder, TileBuf, geometry
from .checks import check_bounds, only_if, running
from .context import DdrTensor, LowerContext
from .isa import splat
from .lower_cast import check_convertible, convert_fn
from .lower_scalar import convert
from .mlir import arith, ir, memref, scf, vector
from .pack_cache import DdrOrigin
from .vectors import InPlace, LazyTile, read_chunk, read_chunk_masked, vtype, write_chunk_masked


def _clip(kb: KernelBuilder, want: ir.Value, dim: ir.Value, off: ir.Value, cap: int | None) -> ir.Value:
    """max(0, min(want, dim - off, cap))."""
    n = arith.minsi(want, arith.subi(dim, off))
    if cap is not None:
        n = arith.minsi(n, kb.idx(cap))
    return arith.maxsi(n, kb.idx(0))


class _Window:
    """The clipped DDR window of one transfer. `lead` holds the static window extent of each
    leading dim (the first may be None: it is never divided by); `extents` the extent of every
    dim clipped to the tensor (which only a clamped load can pass: any other window is
    bounds-checked), and empty when `ok` is false. (The clip also keeps LLVM from constant
    masks: with constant extents its x86 ISel aborts on BF16 scatters.)"""

    def __init__(self, lc: LowerContext, ddr: DdrTensor, offsets: list[ir.Value],
                 wanted: list[ir.Value], caps: Sequence[int | None], ok: ir.Value | None = None) -> None:
        kb = self.kb = lc.kb
        self.ddr, self.offsets = ddr, offsets
        self.lead = list(caps[:-1])
        if any(c is None for c in self.lead[1:]):
            raise lc.error(f"{lc.call.op.name}: the window extents of dims 1..{ddr.rank - 2} of a "
                           f"rank-{ddr.rank} tensor must be static")
        self.extents = [_clip(kb, w, ddr.dim(k), off, cap)
                        for k, (w, off, cap) in enumerate(zip(wanted, offsets, caps))]
        if ok is not None:  # a failed check: an empty window (a load may stay lazy, so no branch)
            self.extents = [arith.select(ok, e, kb.idx(0)) for e in self.extents]

    @property
    def cols(self) -> ir.Value:
        return self.extents[-1]

    def split(self, r: ir.Value) -> list[ir.Value]:
        """Row `r`'s index within the window on each leading dim."""
        idx = []
        for size in reversed(self.lead[1:]):
            if size == 1:
                idx.append(self.kb.idx(0))
            else:
                idx.append(arith.remui(r, self.kb.idx(size)))
                r = arith.divui(r, self.kb.idx(size))
        return ([r] if self.lead else []) + idx[::-1]

    def inside(self, idx: list[ir.Value], first: int = 0) -> ir.Value | None:
        """Whether a row's leading indices from dim `first` on lie in the clipped window
        (None: nothing to check)."""
        cond = None
        for i, n in zip(idx[first:], self.extents[first:]):
            c = arith.cmpi(arith.CmpIPredicate.slt, i, n)
            cond = c if cond is None else arith.andi(cond, c)
        return cond

    def index(self, idx: list[ir.Value], c: ir.Value) -> list[ir.Value]:
        """DDR indices of column `c` of the row with leading indices `idx`."""
        return [arith.addi(o, i) for o, i in zip(self.offsets, idx + [c])]

    def lanes(self, idx: list[ir.Value], c: ir.Value, first: int = 0) -> ir.Value:
        """How many columns from `c` on this row transfers (<= 0: none); leading dims
        before `first` are known to be inside."""
        n = arith.subi(self.cols, c)
        inside = self.inside(idx, first)
        return n if inside is None else arith.select(inside, n, self.kb.idx(0))


NEXT_TILE_BYTES = 16 << 10
"""The largest tile a load prefetches for its loop's next iteration."""


def _arithmetic(e: pir.Expr) -> bool:
    """Whether `e` is computed from variables and constants alone (no call to repeat)."""
    if isinstance(e, pir.BinaryExpr):
        return _arithmetic(e.lhs) and _arithmetic(e.rhs)
    if isinstance(e, (pir.UnaryExpr, pir.Cast)):
        return _arithmetic(e.operand)
    return isinstance(e, (pir.Var, pir.ConstInt))


def _next_offsets(lc: LowerContext, offsets: Sequence[pir.Expr]) -> list[ir.Value] | None:
    """`offsets` as the next iteration of the innermost enclosing loop computes them (None
    when they do not follow that loop)."""
    if not lc.next_iteration or lc.next_iteration[-1] is None or not all(map(_arithmetic, offsets)):
        return None
    var, following = lc.next_iteration[-1]
    if not any(var in expr_vars(e) for e in offsets):
        return None
    current = lc.env[var]
    lc.bind(var, (following, INDEX))
    try:
        return [lc.index(e) for e in offsets]
    finally:
        lc.bind(var, current)


def _next_window(lc: LowerContext, ddr: DdrTensor, offsets: Sequence[pir.Expr],
                 wanted: list[ir.Value], shape: Sequence[int], dtype: DataType) -> _Window | None:
    """The window a load in a loop reads on the loop's next iteration (None: none to
    prefetch). A loop whose every iteration loads a tile of rows a page apart (softmax of a
    [1, N] row per step) otherwise starts each at DRAM latency: hardware prefetchers stop at
    page boundaries."""
    if math.prod(shape) * dtype.itemsize > NEXT_TILE_BYTES:
        return None
    nxt = _next_offsets(lc, offsets)
    return None if nxt is None else _Window(lc, ddr, nxt, wanted, shape)


def _map(rank: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))


def _per_dim(lc: LowerContext, values, static: Sequence[int]) -> list[ir.Value]:
    if values is None:
        return [lc.kb.idx(s) for s in static]
    return [lc.valid_extent(e, s) for e, s in zip(values, static)]


def lower_load(lc: LowerContext, short: str, a: dict) -> TileBuf | LazyTile:
    kb = lc.kb
    ddr = lc.ddr(a["tensor"])
    t = lc.call.type
    rows_n, cols_n = lc.dims(t, lc.where("tile.load"))
    width, pitch = geometry(t.dtype, cols_n)
    first_row = lc.row_mode.row if lc.row_mode is not None else kb.idx(0)
    shape = t.static_shape
    offsets = [lc.index(e) for e in a["offsets"].elements]
    wanted = _per_dim(lc, t.valid_shape, shape)
    ok = check_bounds(lc, a["tensor"], offsets, wanted, _dims(ddr), clamp=bool(a.get("clamp")))
    window = _Window(lc, ddr, offsets, wanted, shape, ok)
    ahead = _next_window(lc, ddr, a["offsets"].elements, wanted, shape, t.dtype)
    vt = vtype(width, t.dtype)
    pad = kb.const_of(vt.element_type, 0)

    def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
        idx = window.split(arith.addi(first_row, r))
        # the first cache line of the next iteration's chunk (or, past its window, of this
        # one); once a line of a page is in flight the hardware streams the rest (prefetching
        # all four lines of a 256-byte x86-64-v4 chunk measured no faster)
        if ahead is not None:
            nidx = ahead.split(arith.addi(first_row, r))
            there = arith.cmpi(arith.CmpIPredicate.sgt, ahead.lanes(nidx, c), kb.idx(0))
            at = [arith.select(there, n, h) for n, h in zip(ahead.index(nidx, c), window.index(idx, c))]
            memref.prefetch(ddr.memref, at, False, 3, True)
        return read_chunk_masked(kb, vt, ddr.memref, window.index(idx, c), _map(ddr.rank), pad,
                                 window.lanes(idx, c))

    def prefetch(r: ir.Value, c: ir.Value) -> None:  # every cache line of chunk (r, c)
        idx = window.split(r)
        for j in range(0, width, max(1, 64 // t.dtype.itemsize)):
            memref.prefetch(ddr.memref, window.index(idx, arith.addi(c, kb.idx(j))), False, 3, True)

    dims = ddr.type.static_shape
    whole_window = t.valid_shape is None and lc.row_mode is None and not a.get("clamp")
    origin = None
    if ddr.load_only and dims is not None and len(shape) == len(dims) and whole_window:
        origin = DdrOrigin(id(ddr), dims, tuple(shape), tuple(offsets))
    column = None
    if ddr.rank >= 2 and lc.row_mode is None and set(window.lead[:-1]) <= {1}:
        column = _column_reader(kb, ddr, window)
    in_place = None
    if lc.defer and ddr.rank == 2 and len(shape) == 2 and whole_window:
        whole = [arith.cmpi(arith.CmpIPredicate.eq, e, kb.idx(n)) for e, n in zip(window.extents, shape)]
        in_place = InPlace(ddr.memref, offsets[0], offsets[1], arith.andi(*whole))
    # a row-mode load reads one row at a time, in L1-sized passes: nothing to run ahead of
    lazy = LazyTile(t.dtype, rows_n, cols_n, pitch, width, lc.valid_of(t), chunk,
                    prefetch if lc.row_mode is None else None, origin, column, in_place=in_place)
    if lc.defer:
        return lazy
    out = lc.result_tile()
    lc.store_result(out, lazy)
    return out


def _column_reader(kb: KernelBuilder, ddr: DdrTensor, window: _Window):
    """`LazyTile.column` of a load through `window`, whose rows run along the tensor's
    second-to-last dim (any dims before it are one deep): one gather down a column, each
    lane a row pitch further, lanes past the window's rows (or any, past its other extents
    or after a failed bounds check) zero. Nothing is emitted unless a transpose calls it."""
    *outer, rows, cols = window.extents

    def column(r: ir.Value, c: ir.Value, w: int) -> ir.Value:
        pitch = list(memref.extract_strided_metadata(ddr.memref))[2 + 2 * ddr.rank - 2]
        inside = arith.cmpi(arith.CmpIPredicate.slt, kb.idx(0), cols)
        for e in outer:
            inside = arith.andi(inside, arith.cmpi(arith.CmpIPredicate.slt, kb.idx(0), e))
        lanes = ir.VectorType.get([w], ir.IndexType.get())
        step = vector.step(lanes)
        offsets = arith.muli(step, vector.broadcast(lanes, pitch))
        in_rows = arith.cmpi(arith.CmpIPredicate.slt, arith.addi(step, vector.broadcast(lanes, r)),
                             vector.broadcast(lanes, rows))
        in_col = arith.andi(inside, arith.cmpi(arith.CmpIPredicate.slt, c, cols))
        mask = arith.andi(in_rows, vector.broadcast(in_rows.type, in_col))
        vt = vtype(w, ddr.type.dtype)
        return vector.gather(vt, ddr.memref, window.index(window.split(r), c), offsets, mask, splat(vt, 0))
    return column


def _store_window(lc: LowerContext, a: dict, ddr: DdrTensor,
                  valid: tuple[ir.Value, ir.Value]) -> tuple[_Window, ir.Value]:
    """The window a store writes (`shapes=` when given, else the tile's (valid) shape; the
    tile's `valid` region clips it further) and whether to write it: it is in bounds and the
    launch is not cancelled."""
    tile_type = a["tile"].type
    offsets = [lc.index(e) for e in a["offsets"].elements]
    if a.get("shapes") is not None:
        shapes = list(a["shapes"].elements)
        wanted = [lc.index(e) for e in shapes]
        caps = [pir.types.dim_value(e) for e in shapes]
    else:  # a tile of lower rank than the tensor fills its trailing dims (leading extents 1)
        lead = len(offsets) - tile_type.rank
        caps = [1] * lead + list(tile_type.static_shape)
        wanted = [lc.kb.idx(1)] * lead + _per_dim(lc, tile_type.valid_shape, caps[lead:])
    wanted[-1] = arith.minsi(wanted[-1], valid[1])
    if len(caps) == 2:
        wanted[0] = arith.minsi(wanted[0], valid[0])
    check_bounds(lc, a["output_tensor"], offsets, wanted, _dims(ddr))
    # a failed check sets the cancel word: one volatile read guards the store (a guard on the
    # compares themselves made LLVM's x86 ISel abort on BF16 tiles)
    return _Window(lc, ddr, offsets, wanted, caps), running(lc)


def _dims(ddr: DdrTensor) -> list[ir.Value]:
    return [ddr.dim(k) for k in range(ddr.rank)]


def _rows(window: _Window, valid_rows: ir.Value) -> tuple[ir.Value, int]:
    """(rows a store loops over, first leading dim each row still checks): the clipped
    extent for rank <= 2, else the tile's valid rows, each checking its leading indices."""
    if not window.lead:
        return window.kb.idx(1), 0
    return (window.extents[0], 1) if len(window.lead) == 1 else (valid_rows, 0)


def _store_valid(lc: LowerContext, a: dict, tile: TileBuf | LazyTile) -> tuple[ir.Value, ir.Value]:
    """The stored tile's valid region (of the whole tile in row mode, where `tile` is one row)."""
    return tile.valid if lc.row_mode is None else lc.full_valid_of(a["tile"].type)


def lower_store(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    kb = lc.kb
    ddr = lc.ddr(a["output_tensor"])
    atomic = a.get("atomic")
    if atomic is AtomicType.Add:
        return _atomic_add_store(lc, a, ddr)
    if atomic not in (None, AtomicType.None_):
        raise lc.error(f"tile.store with atomic={atomic!r} is not supported by the kernel backend")
    tile = lc.operand(a["tile"])
    valid = _store_valid(lc, a, tile)
    window, ok = _store_window(lc, a, ddr, valid)
    rows, first = _rows(window, valid[0])
    conv = None
    if tile.dtype is not ddr.type.dtype:  # the store converts, as tile.cast's default rules
        check_convertible(lc, "tile.store", tile.dtype, ddr.type.dtype)
        conv = convert_fn(tile.dtype, ddr.type.dtype)
    address = _ByteAddress(kb, ddr) if kb.streaming_store(tensor_bytes(ddr.type)) else None
    lo = kb.idx(0)
    if lc.row_mode is not None:  # only the current row, if the window has it
        lo = lc.row_mode.row
        rows = arith.minsi(rows, arith.addi(lo, kb.idx(1)))
    with only_if(ok), kb.loop(lo, rows) as lr:
        r = lr.induction_variable
        idx = window.split(r)
        with kb.loop(0, tile.pitch, tile.width) as lcol:
            c = lcol.induction_variable
            v = read_chunk(kb, tile, arith.subi(r, lo), c)
            if conv is not None:
                v = conv(v)
            at = window.index(idx, c)
            write_chunk_masked(kb, v, ddr.memref, at, _map(ddr.rank), window.lanes(idx, c, first),
                               None if address is None else address.aligned(at))
    return ddr


class _ByteAddress:
    """Byte addresses of a DDR tensor's elements, for alignment checks."""

    def __init__(self, kb: KernelBuilder, ddr: DdrTensor) -> None:
        self.kb = kb
        meta = list(memref.extract_strided_metadata(ddr.memref))
        self.strides = meta[2 + ddr.rank:]
        self.itemsize = ddr.type.dtype.itemsize
        base = memref.extract_aligned_pointer_as_index(ddr.memref)
        self.base = arith.addi(base, arith.muli(meta[1], kb.idx(self.itemsize)))

    def aligned(self, index: list[ir.Value], align: int = 64) -> ir.Value:
        """i1: the element at `index` starts an `align`-byte boundary."""
        elem = self.kb.idx(0)
        for i, s in zip(index, self.strides):
            elem = arith.addi(elem, arith.muli(i, s))
        addr = arith.addi(self.base, arith.muli(elem, self.kb.idx(self.itemsize)))
        low = arith.andi(addr, self.kb.idx(align - 1))
        return arith.cmpi(arith.CmpIPredicate.eq, low, self.kb.idx(0))


def tensor_bytes(t: pir.TensorType) -> int | None:
    """The size of a tensor of static shape (None for a dynamic one)."""
    shape = t.static_shape
    if shape is None:
        return None
    n = t.dtype.itemsize
    for d in shape:
        n *= d
    return n


def _atomic_add_store(lc: LowerContext, a: dict, ddr: DdrTensor) -> DdrTensor:
    kb = lc.kb
    tile = lc.tile(a["tile"])
    window, ok = _store_window(lc, a, ddr, tile.valid)
    kind = arith.AtomicRMWKind.addf if ddr.type.dtype.is_float else arith.AtomicRMWKind.addi
    rows, first = _rows(window, tile.valid[0])
    with only_if(ok), kb.loop(0, rows) as lr:
        r = lr.induction_variable
        idx = window.split(r)
        n = arith.maxsi(window.lanes(idx, kb.idx(0), first), kb.idx(0))
        with kb.loop(0, n) as lcol:
            c = lcol.induction_variable
            v = memref.load(tile.buf, [arith.addi(arith.muli(r, kb.idx(tile.pitch)), c)])
            v = convert(v, tile.dtype, ddr.type.dtype)
            memref.atomic_rmw(kind, v, ddr.memref, window.index(idx, c))
    return ddr


def lower_tensor_dim(lc: LowerContext, short: str, a: dict) -> tuple[ir.Value, DataType]:
    """`tensor.dim`: the extent of one axis, read from the DDR tensor's memref."""
    ddr = lc.ddr(a["tensor"])
    extent = ddr.dim(int(a["axis"]) % ddr.rank)
    return arith.index_cast(ir.IntegerType.get_signless(64), extent), INT64


def _element_index(lc: LowerContext, ddr: DdrTensor, offset: pir.Expr) -> list[ir.Value]:
    """One index per axis of a DDR tensor element, from one per axis or a flat row-major one."""
    idx = [lc.index(e) for e in (offset.elements if isinstance(offset, pir.MakeTuple) else [offset])]
    if len(idx) == 1 and ddr.rank > 1:
        flat, idx = idx[0], []
        for axis in range(ddr.rank - 1, 0, -1):
            idx.insert(0, arith.remui(flat, ddr.dim(axis)))
            flat = arith.divui(flat, ddr.dim(axis))
        idx.insert(0, flat)
    return idx


def lower_tensor_read(lc: LowerContext, short: str, a: dict) -> tuple[ir.Value, DataType]:
    """`tensor.read`: one element of a DDR tensor, at one index per axis or a flat row-major index."""
    ddr = lc.ddr(a["src"])
    idx = _element_index(lc, ddr, a["offset"])
    ok = check_bounds(lc, a["src"], idx, [lc.kb.idx(1)] * len(idx), _dims(ddr))
    read = scf.IfOp(ok, [ir.MemRefType(ddr.memref.type).element_type], has_else=True)
    with ir.InsertionPoint(read.then_block):
        scf.yield_([memref.load(ddr.memref, idx)])
    with ir.InsertionPoint(read.else_block):
        scf.yield_([lc.kb.const(ddr.type.dtype, 0)])
    v = read.result
    if ddr.type.dtype is BOOL:
        return arith.cmpi(arith.CmpIPredicate.ne, v, arith.constant(v.type, 0)), BOOL
    return v, ddr.type.dtype


def lower_tensor_write(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    """`tensor.write`: one element of a DDR tensor set to a scalar (bounds-checked)."""
    ddr = lc.ddr(a["dst"])
    idx = _element_index(lc, ddr, a["offset"])
    ok = check_bounds(lc, a["dst"], idx, [lc.kb.idx(1)] * len(idx), _dims(ddr))
    v = lc.scalar(a["value"], ddr.type.dtype, storage=True)
    if ddr.type.dtype is BOOL:
        v = arith.extui(ir.IntegerType.get_signless(8), v)
    write = scf.IfOp(ok)
    with ir.InsertionPoint(write.then_block):
        memref.store(v, ddr.memref, idx)
        scf.yield_([])
    return ddr


def lower_expand_clone(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    """`tensor.expand_clone`: every element of the DDR target from the DDR input, an input
    dim of extent 1 repeating (element by element: a DDR-to-DDR broadcast copy)."""
    src, dst = lc.ddr(a["input"]), lc.ddr(a["target"])
    kb = lc.kb
    repeat = [pir.types.dim_value(d) == 1 for d in src.type.shape]

    def copy(axis: int, index: list) -> None:
        if axis == dst.rank:
            src_index = [kb.idx(0) if r else i for r, i in zip(repeat, index)]
            memref.store(memref.load(src.memref, src_index), dst.memref, index)
            return
        with kb.loop(0, dst.dim(axis)) as loop:
            copy(axis + 1, index + [loop.induction_variable])
    copy(0, [])
    return dst


def register(table: dict) -> None:
    table["tensor.expand_clone"] = lower_expand_clone
    table["tensor.write"] = lower_tensor_write
    table["tile.load"] = lower_load
    table["tile.store"] = lower_store
    table["tensor.dim"] = lower_tensor_dim
    table["tensor.read"] = lower_tensor_read
