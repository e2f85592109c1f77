"""Tile creation and data movement: `full`, `create`, `move`, `read`, `write`, `fillpad`,
`fillpad_expand`, `slice`, `assemble`, `concat`, `reshape`, `transpose` (any two axes)."""

from __future__ import annotations

from typing import Any

from ... import ir as pir
from ...dtypes import BF16, BOOL, FP32, DataType
from ...ir.enums import PadValue
from . import isa
from .builder import TileBuf, compute_dtype, geometry, static_index
from .checks import check_bounds, check_tile_window, only_if
from .context import LowerContext, tile_dims
from .lower_scalar import convert
from .mlir import KernelCompileError, arith, ir, memref, vector
from .pack_cache import repeats
from .vector_math import splat
from .vectors import LazyTile, full, lazy_map, materialize, read_chunk, scalar, transpose16, vtype


def _elements(e: Any) -> list:
    """An index list's entries (a `MakeTuple`, a single index, or a type's shape)."""
    return list(e.elements if isinstance(e, pir.MakeTuple) else e if isinstance(e, (list, tuple)) else [e])


def _indices(lc: LowerContext, e: pir.Expr) -> list[ir.Value]:
    return [lc.index(x) for x in _elements(e)]


def _flat_offset(lc: LowerContext, t: TileBuf, idx: list[ir.Value]) -> ir.Value:
    kb = lc.kb
    if len(idx) == 1:  # flat logical index
        r = arith.divui(idx[0], kb.idx(t.cols))
        c = arith.remui(idx[0], kb.idx(t.cols))
    else:
        r = idx[0]
        for i, d in zip(idx[1:-1], _leading_dims(lc)):
            r = arith.addi(arith.muli(r, kb.idx(d)), i)
        c = idx[-1]
    return arith.addi(arith.muli(r, kb.idx(t.pitch)), c)


def _leading_dims(lc: LowerContext) -> list[int]:
    shape = lc.call.args[0].type.static_shape or ()
    return list(shape[1:-1])


def _lanes(width: int, n: ir.Value) -> ir.Value:
    return vector.create_mask(ir.VectorType.get([width], ir.IntegerType.get_signless(1)), [n])


def lower_full(lc: LowerContext, short: str, a: dict):
    dtype = lc.call.type.dtype
    v = lc.scalar(a["value"], dtype, storage=True)
    return lc.elementwise([scalar(v, dtype)], lambda x: x[0], convert=False)


def lower_create(lc: LowerContext, short: str, a: dict) -> TileBuf:
    return lc.result_tile()


def lower_move(lc: LowerContext, short: str, a: dict):
    """A copy into another memory space; the source's own buffer where it dies here (all
    spaces are host memory), a still-deferred source itself (`_relabel`)."""
    return lc.dies_into(a["tile"]) or _relabel(lc, lc.operand(a["tile"]))


def copy_tile(lc: LowerContext, x: TileBuf | LazyTile) -> TileBuf | LazyTile:
    """`x` as the current call's result: an identity chunk map (deferred where it may be)."""
    return lc.elementwise([full(x)], lambda v: v[0], convert=False)


def _relabel(lc: LowerContext, x: TileBuf | LazyTile) -> TileBuf | LazyTile:
    """`x` as the current call's result of the same dims and valid region (a move, a reshape
    that keeps rows and columns): a still-deferred tile passes through, so its reader reads
    the source itself (a DDR load keeps its row-ahead prefetch), and so does a tile buffer
    for a reader that only reads it (a matmul reads its A there); otherwise a copy."""
    passes = lc.defer and (isinstance(x, LazyTile) or lc.request.read_only)
    return x if passes else copy_tile(lc, x)


def lower_read(lc: LowerContext, short: str, a: dict):
    t = lc.tile(a["src"])
    v = memref.load(t.buf, [_flat_offset(lc, t, _indices(lc, a["offset"]))])
    if t.dtype is BOOL:
        return arith.cmpi(arith.CmpIPredicate.ne, v, arith.constant(v.type, 0)), BOOL
    return v, t.dtype


def lower_write(lc: LowerContext, short: str, a: dict) -> TileBuf:
    t = lc.tile(a["dst"])
    v = lc.scalar(a["value"], t.dtype, storage=True)
    if t.dtype is BOOL:
        v = arith.extui(ir.IntegerType.get_signless(8), convert(v, t.dtype, BOOL))
    memref.store(v, t.buf, [_flat_offset(lc, t, _indices(lc, a["offset"]))])
    return t


def _pad_value(dtype: DataType, pad) -> float | int:
    pad = PadValue(pad) if not isinstance(pad, PadValue) else pad
    if pad in (PadValue.zero, PadValue.null):
        return 0
    if compute_dtype(dtype).is_float:
        return float("inf") if pad is PadValue.max else float("-inf")
    if pad is PadValue.max:
        return (1 << (dtype.bits - 1)) - 1 if dtype.signed else (1 << dtype.bits) - 1
    return -(1 << (dtype.bits - 1)) if dtype.signed else 0


def lower_fillpad(lc: LowerContext, short: str, a: dict):
    x = lc.operand(a["value"])
    kb = lc.kb
    fill = _pad_value(x.dtype, a.get("pad_value", PadValue.zero))
    vr, vc = x.valid
    t = lc.call.type
    inner = lazy_map(kb, x.rows, x.cols, x.dtype, x.valid, [full(x)], lambda v: v[0], convert=False)
    read = inner.chunk

    def chunk(r, c):
        v = read(r, c)
        inside = arith.cmpi(arith.CmpIPredicate.slt, r, vr)
        n = arith.select(inside, arith.subi(vc, c), kb.idx(0))
        return arith.select(_lanes(x.width, n), v, splat(v.type, fill))

    inner.chunk = chunk
    inner.valid = lc.valid_of(t)
    if lc.defer:
        return inner
    out = lc.result_tile()
    materialize(kb, out, inner)
    return out


def lower_fillpad_expand(lc: LowerContext, short: str, a: dict):
    """A larger tile holding the value's valid region at its top-left, pad everywhere else."""
    src = lc.tile(a["value"])
    kb = lc.kb
    out = lc.result_tile()
    fill = _pad_value(src.dtype, a.get("pad_value", PadValue.zero))
    vr, vc = src.valid
    read = window_reader(lc, src, kb.idx(0), kb.idx(0), out.width)
    last = kb.idx(src.rows - 1)

    def chunk(r, c):
        v = read(arith.minui(r, last), c)  # (rows past the value's are all pad)
        inside = arith.cmpi(arith.CmpIPredicate.slt, r, vr)
        n = arith.select(inside, arith.subi(vc, c), kb.idx(0))
        return arith.select(_lanes(out.width, n), v, splat(v.type, fill))

    materialize(kb, out, LazyTile(out.dtype, out.rows, out.cols, out.pitch, out.width, out.valid, chunk))
    return out


def window_reader(lc: LowerContext, src: TileBuf, off_r: ir.Value, off_c: ir.Value, width: int):
    """chunk(r, c) of src[off_r + r, off_c + c ...], lanes past src's columns read as 0."""
    kb = lc.kb
    vt = vtype(width, src.dtype)
    pad = kb.const_of(vt.element_type, 0)
    mapping = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(1, 1))

    def chunk(r, c):
        col = arith.addi(off_c, c)
        base = arith.addi(arith.muli(arith.addi(off_r, r), kb.idx(src.pitch)), col)
        n = arith.subi(kb.idx(src.cols), col)
        return vector.transfer_read(vt, src.buf, [base], mapping, pad, [True], mask=_lanes(width, n))
    return chunk


def lower_slice(lc: LowerContext, short: str, a: dict):
    src = lc.tile(a["input"])
    out = lc.result_tile()
    window = [pir.types.dim_value(d) for d in _elements(a["shape"])]
    rows_block = ([out.rows, out.cols], [out.cols], [None, out.cols])
    if any(w != 1 for w in window[:-2]) or window[-2:] not in rows_block:
        return _gather_window(lc, a, src, window, out)  # not a block of src's folded rows
    off = [lc.index(e) for e in a["offset"].elements]
    off_r, off_c = _folded_row(lc, a["input"], off[:-1]), off[-1]
    ok = _window_inside(lc, a["input"], off_r, off_c, (out.rows, out.cols), src)
    reader = window_reader(lc, src, off_r, off_c, out.width)
    with only_if(ok), lc.kb.loop(0, out.rows) as lr:
        r = lr.induction_variable
        with lc.kb.loop(0, out.pitch, out.width) as lcol:
            c = lcol.induction_variable
            vector.store(reader(r, c), out.buf, [arith.addi(arith.muli(r, lc.kb.idx(out.pitch)), c)])
    return out


def _folded_row(lc: LowerContext, tile: pir.Expr, coords: list[ir.Value]) -> ir.Value:
    """The row of `tile`'s folded (rows, cols) buffer that N-D coordinates `coords` (all but the
    last axis) name."""
    dims = tile.type.shape[1:-1]
    row = coords[0] if coords else lc.kb.idx(0)
    for c, d in zip(coords[1:], dims):
        row = arith.addi(arith.muli(row, lc.index(d)), c)
    return row


def _gather_window(lc: LowerContext, a: dict, src: TileBuf, window: list[int], out: TileBuf) -> TileBuf:
    """A window that is not a block of `src`'s folded rows (an N-D source, or a rank-reducing
    slice such as a column read as a row): `out`'s elements in row-major order are the
    window's, copied one by one."""
    if None in window:
        shape = pir.types.format_shape(_elements(a["shape"]))
        raise KernelCompileError(f"{lc.where('tile.slice')}: a window of an N-D tile or a rank-reducing "
                                 f"window needs static extents, got {shape}")
    kb = lc.kb
    offsets = [lc.index(e) for e in a["offset"].elements]
    ok = check_bounds(lc, a["input"], offsets, [kb.idx(w) for w in window],
                      [lc.index(d) for d in a["input"].type.shape])

    def src_offset(i, j):
        k, coords = arith.addi(arith.muli(i, kb.idx(out.cols)), j), []
        for w in reversed(window):
            coords.append(arith.remui(k, kb.idx(w)))
            k = arith.divui(k, kb.idx(w))
        coords = [arith.addi(o, c) for o, c in zip(offsets, reversed(coords))]
        row = _folded_row(lc, a["input"], coords[:-1])
        return arith.addi(arith.muli(row, kb.idx(src.pitch)), coords[-1])

    with only_if(ok):
        _element_copy(lc, src, out, src_offset)
    return out


def write_window(lc: LowerContext, dst: TileBuf, src, off_r: ir.Value, off_c: ir.Value) -> None:
    """dst[off_r + r, off_c + c] = src[r, c] over src's valid region (clipped to dst)."""
    kb = lc.kb
    cols = arith.minsi(src.valid[1], arith.subi(kb.idx(dst.cols), off_c))
    mapping = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(1, 1))
    with kb.loop(0, src.valid[0]) as lr:
        r = lr.induction_variable
        with kb.loop(0, src.pitch, src.width) as lcol:
            c = lcol.induction_variable
            v = read_chunk(kb, src, r, c)
            base = arith.addi(arith.muli(arith.addi(off_r, r), kb.idx(dst.pitch)), arith.addi(off_c, c))
            vector.transfer_write(None, v, dst.buf, [base], mapping, [True],
                                  mask=_lanes(src.width, arith.subi(cols, c)))


def lower_assemble(lc: LowerContext, short: str, a: dict) -> TileBuf:
    dst = lc.tile(a["target"])
    src = lc.operand(a["source"])
    off = [lc.index(e) for e in a["offset"].elements]
    off_r, off_c = (lc.kb.idx(0), off[0]) if len(off) == 1 else (off[-2], off[-1])
    with only_if(_window_inside(lc, a["target"], off_r, off_c, src.valid, dst)):
        write_window(lc, dst, src, off_r, off_c)
    return dst


def _window_inside(lc: LowerContext, tile: pir.Expr, off_r: ir.Value, off_c: ir.Value, extent,
                   buf: TileBuf) -> ir.Value:
    """The bounds check of an on-chip window of `tile` (held in `buf`) at (off_r, off_c) with
    (rows, cols) `extent` (ints or index values); in row mode only its columns."""
    kb = lc.kb
    rows, cols = (v if isinstance(v, ir.Value) else kb.idx(v) for v in extent)
    if lc.row_mode is not None:
        return check_tile_window(lc, tile, [off_c], [cols], (buf.cols,))
    return check_tile_window(lc, tile, [off_r, off_c], [rows, cols], (buf.rows, buf.cols))


def lower_concat(lc: LowerContext, short: str, a: dict) -> TileBuf:
    s0, s1 = lc.operand(a["src0"]), lc.operand(a["src1"])
    out = lc.result_tile()
    zero = lc.kb.idx(0)
    write_window(lc, out, s0, zero, zero)
    write_window(lc, out, s1, zero, lc.kb.idx(s0.cols))
    return out


def _element_copy(lc: LowerContext, src: TileBuf, out: TileBuf, src_offset) -> None:
    """out[i, j] = src[src_offset(i, j)] element by element."""
    kb = lc.kb
    with kb.loop(0, out.rows) as lr:
        i = lr.induction_variable
        with kb.loop(0, out.cols) as lcol:
            j = lcol.induction_variable
            v = memref.load(src.buf, [src_offset(i, j)])
            memref.store(v, out.buf, [arith.addi(arith.muli(i, kb.idx(out.pitch)), j)])


def lower_reshape(lc: LowerContext, short: str, a: dict):
    x = lc.operand(a["input"])
    if tile_dims(lc.call.type, lc.where("tile.reshape")) == (x.rows, x.cols):
        return _relabel(lc, x)
    src = lc.tile(a["input"])
    out = lc.result_tile()
    kb = lc.kb

    def offset(i, j):
        flat = arith.addi(arith.muli(i, kb.idx(out.cols)), j)
        r, c = arith.divui(flat, kb.idx(src.cols)), arith.remui(flat, kb.idx(src.cols))
        return arith.addi(arith.muli(r, kb.idx(src.pitch)), c)
    _element_copy(lc, src, out, offset)
    return out


def lower_transpose(lc: LowerContext, short: str, a: dict) -> TileBuf | LazyTile:
    """Swap two axes of a tile of any rank (leading axes fold into rows, as every tile); a
    matrix of 16 x 16 blocks of 16- or 32-bit elements is transposed block by block in
    registers (`_transpose_blocks`), anything else element by element. The transpose of a
    32-bit DDR load's 2D tile fused into a matmul's B (FuseTileOps) in a loop that brings the
    same tile back stays lazy: B is packed once per call, into the panel cache, from 16 x 16
    blocks of the loaded tile transposed in registers where it is whole such blocks
    (`LazyTile.transpose_of`), else by gathers down its columns. So is a BF16 one feeding the
    pair-dot matmul, whose k pairs are 32-bit words of the loaded rows (8x512x512x64 bf16
    attention on a Zen 5 VM, the keys' transpose and pack per trip gone: 1.35 -> 1.04 ms)."""
    shape = list(a["input"].type.static_shape)
    if lc.defer and len(shape) == 2:
        src = lc.operand(a["input"])
        if (isinstance(src, LazyTile) and src.column is not None and src.origin is not None
                and (src.dtype.itemsize == 4 or _pairs_packable(src)) and repeats(lc.kb, src.origin.offsets)):
            return _lazy_transpose(lc, src)
        if isinstance(src, LazyTile):
            src = lc.in_buffer(src)
    else:
        src = lc.tile(a["input"])
    axes = [ax % len(shape) for ax in (a["axis1"], a["axis2"])]
    out_shape = list(shape)
    out_shape[axes[0]], out_shape[axes[1]] = shape[axes[1]], shape[axes[0]]
    out = lc.result_tile()
    kb = lc.kb
    if (len(shape) == 2 and axes[0] != axes[1] and src.dtype is not BOOL and src.dtype.itemsize in (2, 4)
            and all(d % _BLOCK == 0 for d in shape) and src.pitch % _BLOCK == 0 and out.pitch % _BLOCK == 0):
        _transpose_blocks(lc, src, out)
        return out

    def offset(i, j):
        index = _unflatten(kb, i, out_shape[:-1]) + [j]  # out's multi-index
        index[axes[0]], index[axes[1]] = index[axes[1]], index[axes[0]]
        row = kb.idx(0)
        for k, d in zip(index[:-1], shape[:-1]):
            row = arith.addi(arith.muli(row, kb.idx(d)), k)
        return arith.addi(arith.muli(row, kb.idx(src.pitch)), index[-1])
    _element_copy(lc, src, out, offset)
    return out


def _pairs_packable(src: LazyTile) -> bool:
    """Whether the transpose of BF16 tile `src` can feed the pair-dot matmul, packed from
    `src` (`LazyTile.transpose_of`): whole 16 x 16 blocks of 32-bit k pairs, panels one chunk
    wide."""
    return (src.dtype is BF16 and isa.current().bf16_dot and _whole_blocks(src, 32)
            and geometry(src.dtype, src.rows)[0] == isa.matmul_block()[1])


def _whole_blocks(src: LazyTile, block_cols: int) -> bool:
    """Whether `src` is whole (statically valid) 16-row, `block_cols`-column blocks, its chunks too."""
    full_tile = [static_index(v) for v in src.valid] == [src.rows, src.cols]
    return full_tile and src.rows % 16 == 0 and src.cols % block_cols == 0 and src.cols % src.width == 0 \
        and src.width % block_cols == 0


def _lazy_transpose(lc: LowerContext, src: LazyTile) -> LazyTile:
    t = lc.call.type
    width, pitch = geometry(src.dtype, src.rows)
    blocks = _pairs_packable(src) if src.dtype.itemsize == 2 else src.dtype is FP32 and _whole_blocks(src, 16)
    return LazyTile(src.dtype, src.cols, src.rows, pitch, width, lc.valid_of(t),
                    lambda r, c: src.column(c, r, width), origin=src.origin.transposed(),
                    transpose_of=src if blocks else None)


_BLOCK = 16


def _transpose_blocks(lc: LowerContext, src: TileBuf, out: TileBuf) -> None:
    """out = src^T for matrices of 16 x 16 blocks: each block's 16 rows are loaded as vectors,
    transposed in registers (`transpose16`) and stored as the 16 rows of its mirror block."""
    kb = lc.kb
    vt = vtype(_BLOCK, src.dtype)
    with kb.loop(0, out.rows, _BLOCK) as lr, kb.loop(0, out.cols, _BLOCK) as lcol:
        i, j = lr.induction_variable, lcol.induction_variable

        def at(t: TileBuf, row: ir.Value, r: int, col: ir.Value) -> ir.Value:
            return arith.addi(arith.muli(arith.addi(row, kb.idx(r)), kb.idx(t.pitch)), col)
        rows = transpose16([vector.load(vt, src.buf, [at(src, j, r, i)]) for r in range(_BLOCK)])
        for r, v in enumerate(rows):
            vector.store(v, out.buf, [at(out, i, r, j)])


def _unflatten(kb, flat, dims: list[int]) -> list:
    """The row-major multi-index over `dims` of the flat index `flat`."""
    index = []
    for d in reversed(dims):
        index.append(arith.remui(flat, kb.idx(d)))
        flat = arith.divui(flat, kb.idx(d))
    return index[::-1]


def register(table: dict) -> None:
    for name, fn in (("full", lower_full), ("create", lower_create), ("move", lower_move),
                     ("read", lower_read), ("write", lower_write), ("fillpad", lower_fillpad),
                     ("fillpad_expand", lower_fillpad_expand),
                     ("slice", lower_slice), ("assemble", lower_assemble), ("concat", lower_concat),
                     ("reshape", lower_reshape), ("transpose", lower_transpose)):
        table[f"tile.{name}"] = fn
