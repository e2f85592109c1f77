"""Data-dependent indexing: `gather` (flat, or along any axis: `torch.gather`)
and `scatter` (along the last axis of a 2D tile), and their mask-pattern forms `gather_mask` /
`scatter_mask` (column k of the compact side is column k * stride + phase of the wide side),
as vector gathers / scatters (`vector.gather` / `vector.scatter`, AVX-512 gather / scatter
instructions for 32-bit data); `mscatter` scatters a tile's elements to flat indices of a DDR
tensor; `scatter_update` replaces whole rows, chunk by chunk.

Indices are checked lane by lane: an out-of-range index reads 0 (gather) or writes nothing
(scatter) instead of touching memory outside the tile; torch would raise. Scatter writes
only `src`'s valid region, in row-major order, so of duplicate indices the last one wins
(as torch's CPU scatter does).
"""

from __future__ import annotations

from ...dtypes import DataType
from ...ir.ops.masks import stride_phase
from .builder import TileBuf
from .context import DdrTensor, LowerContext
from .lower_generate import generated_tile, lane_indices
from .mlir import arith, ir, memref, scf, vector
from .vector_math import splat
from .vectors import LazyTile, full, load_elem, map_chunks, read_chunk, store_chunk, vtype

_I32 = ir.IntegerType.get_signless


def _in_range(v: ir.Value, limit: ir.Value) -> ir.Value:
    """Lanes with 0 <= v < limit (limit an index scalar)."""
    i32 = _I32(32)
    lo = arith.cmpi(arith.CmpIPredicate.sge, v, splat(v.type, 0))
    hi = arith.cmpi(arith.CmpIPredicate.slt, v, vector.broadcast(v.type, arith.index_cast(i32, limit)))
    return arith.andi(lo, hi)


def _index_chunk(lc: LowerContext, index: TileBuf | LazyTile, r: ir.Value, c: ir.Value) -> ir.Value:
    """The index tile's chunk at (r, c) as i32 lanes."""
    v = read_chunk(lc.kb, index, r, c)
    if v.type.element_type.width < 32:
        v = arith.extsi(ir.VectorType.get(v.type.shape, _I32(32)), v)
    return v


def _same_width(lc: LowerContext, name: str, width: int, index: TileBuf | LazyTile) -> None:
    if index.width != width:
        raise lc.error(f"{name}: index chunks of {index.width} lanes do not match the data's {width}")


def _row_base(kb, r: ir.Value, lead: list[int], strides: list[int], skip: int) -> ir.Value:
    """The source offset of output row `r`: `r` split into coordinates over the index's
    leading dims `lead` (row-major), each times its source stride, except axis `skip`."""
    base, rest = kb.idx(0), r
    for axis in reversed(range(len(lead))):
        coord = arith.remui(rest, kb.idx(lead[axis]))
        rest = arith.divui(rest, kb.idx(lead[axis]))
        if axis != skip:
            base = arith.addi(base, arith.muli(coord, kb.idx(strides[axis])))
    return base


def lower_gather(lc: LowerContext, short: str, a: dict) -> object:
    src, index = lc.tile(a["input"]), lc.operand(a["index"])
    kb = lc.kb
    dtype: DataType = lc.call.type.dtype
    i32 = _I32(32)
    src_shape = list(lc.call.args[0].type.static_shape)
    lead = list(lc.call.args[1].type.static_shape)[:-1]
    rank = len(src_shape)
    axis = None if a.get("dim") is None else a["dim"] % rank
    strides = [src.pitch] * len(lead)  # source stride of each leading axis
    for k in reversed(range(len(lead) - 1)):
        strides[k] = strides[k + 1] * src_shape[k + 1]

    def chunk_of(width: int):
        _same_width(lc, "tile.gather", width, index)
        vt = vtype(width, dtype)
        zero = splat(vt, 0.0 if dtype.is_float else 0)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            idx = _index_chunk(lc, index, r, c)
            if axis is None:  # flat: input.reshape(-1)[index]
                ok = _in_range(idx, kb.idx(src.rows * src.cols))
                offsets = idx
                if src.pitch != src.cols:
                    cols = splat(idx.type, src.cols)
                    offsets = arith.addi(arith.muli(arith.divui(idx, cols), splat(idx.type, src.pitch)),
                                         arith.remui(idx, cols))
            else:
                row = arith.index_cast(i32, _row_base(kb, r, lead, strides, axis))
                base = vector.broadcast(idx.type, row)
                ok = _in_range(idx, kb.idx(src_shape[axis]))
                if axis == rank - 1:
                    offsets = arith.addi(base, idx)
                else:
                    cols = lane_indices(width, c, i32)
                    ok = arith.andi(ok, _in_range(cols, kb.idx(src.cols)))
                    along = arith.muli(idx, splat(idx.type, strides[axis]))
                    offsets = arith.addi(arith.addi(base, along), cols)
            return vector.gather(vt, src.buf, [kb.idx(0)], offsets, ok, zero)
        return chunk
    return generated_tile(lc, chunk_of)


def _copy_of(lc: LowerContext, dst: TileBuf) -> TileBuf:
    """The call's result tile, holding a copy of dst."""
    out = lc.result_tile()
    map_chunks(lc.kb, out, [full(dst)], lambda v: v[0], convert=False)
    return out


def _scatter_rows(lc: LowerContext, dst: TileBuf, src: TileBuf | LazyTile, target) -> TileBuf:
    """A copy of dst with each valid element (r, c) of src written to the column lanes
    `target(r, c, lanes)` -> (columns, ok or None) of row r; lanes not ok write nothing."""
    kb = lc.kb
    out = _copy_of(lc, dst)
    rows, cols = src.valid
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        base = vector.broadcast(ir.VectorType.get([src.width], _I32(32)),
                                arith.index_cast(_I32(32), arith.muli(r, kb.idx(out.pitch))))
        with kb.loop(0, src.pitch, src.width) as lcol:
            c = lcol.induction_variable
            lanes = lane_indices(src.width, c, _I32(32))
            columns, ok = target(r, c, lanes)
            ok = _in_range(lanes, cols) if ok is None else arith.andi(ok, _in_range(lanes, cols))
            value = read_chunk(kb, src, r, c)
            vector.scatter(None, out.buf, [kb.idx(0)], arith.addi(base, columns), ok, value)
    return out


def lower_scatter(lc: LowerContext, short: str, a: dict) -> TileBuf:
    dst, index, src = lc.tile(a["input"]), lc.operand(a["index"]), lc.operand(a["src"])
    _same_width(lc, "tile.scatter", src.width, index)

    def target(r: ir.Value, c: ir.Value, lanes: ir.Value):
        idx = _index_chunk(lc, index, r, c)
        return idx, _in_range(idx, lc.kb.idx(dst.cols))
    return _scatter_rows(lc, dst, src, target)


def _mask_columns(pattern: int, lanes: ir.Value) -> ir.Value:
    """Column k of the compact side -> column k * stride + phase of the wide side."""
    stride, phase = stride_phase(pattern)
    return arith.addi(arith.muli(lanes, splat(lanes.type, stride)), splat(lanes.type, phase))


def lower_gather_mask(lc: LowerContext, short: str, a: dict) -> object:
    src = lc.tile(a["src"])
    kb = lc.kb
    dtype: DataType = lc.call.type.dtype
    cols = kb.idx(lc.call.type.static_shape[1])

    def chunk_of(width: int):
        vt = vtype(width, src.dtype)
        zero = splat(vt, 0.0 if src.dtype.is_float else 0)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            lanes = lane_indices(width, c, _I32(32))
            base = arith.index_cast(_I32(32), arith.muli(r, kb.idx(src.pitch)))
            offsets = arith.addi(vector.broadcast(lanes.type, base), _mask_columns(a["mask_pattern"], lanes))
            v = vector.gather(vt, src.buf, [kb.idx(0)], offsets, _in_range(lanes, cols), zero)
            return v if dtype is src.dtype else arith.bitcast(vtype(width, dtype), v)
        return chunk
    return generated_tile(lc, chunk_of)


def lower_scatter_mask(lc: LowerContext, short: str, a: dict) -> TileBuf:
    dst, src = lc.tile(a["dst"]), lc.operand(a["src"])

    def target(r: ir.Value, c: ir.Value, lanes: ir.Value):
        return _mask_columns(a["mask_pattern"], lanes), None
    return _scatter_rows(lc, dst, src, target)


def lower_scatter_update(lc: LowerContext, short: str, a: dict) -> TileBuf:
    """A copy of input, then row index.flat[k] = src row k for each valid index element in
    order (the last write wins), whole chunks at a time."""
    dst, index, src = lc.tile(a["input"]), lc.tile(a["index"]), lc.operand(a["src"])
    kb = lc.kb
    out = _copy_of(lc, dst)
    rows, cols = index.valid
    with kb.loop(0, rows) as li:
        i = li.induction_variable
        with kb.loop(0, cols) as lj:
            j = lj.induction_variable
            row = arith.index_cast(ir.IndexType.get(),
                                   load_elem(index, arith.addi(arith.muli(i, kb.idx(index.pitch)), j)))
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, row, kb.idx(0)),
                            arith.cmpi(arith.CmpIPredicate.slt, row, kb.idx(out.rows)))
            k = arith.addi(arith.muli(i, kb.idx(index.cols)), j)
            branch = scf.IfOp(ok, [], has_else=False)
            with ir.InsertionPoint(branch.then_block):
                base = arith.muli(row, kb.idx(out.pitch))
                with kb.loop(0, out.pitch, out.width) as lc_:
                    c = lc_.induction_variable
                    store_chunk(out, arith.addi(base, c), read_chunk(kb, src, k, c))
                scf.yield_([])
    return out


def lower_mscatter(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    """output_tensor.reshape(-1)[idx[i, j]] = src[i, j], one vector scatter per chunk: the
    flat index splits into the tensor's coordinates, which its strides turn into offsets."""
    src, index, ddr = lc.operand(a["src"]), lc.operand(a["idx"]), lc.ddr(a["output_tensor"])
    _same_width(lc, "tile.mscatter", src.width, index)
    kb = lc.kb
    i32 = _I32(32)
    vt = ir.VectorType.get([src.width], i32)
    dims = [arith.index_cast(i32, ddr.dim(k)) for k in range(ddr.rank)]
    meta = list(memref.extract_strided_metadata(ddr.memref))
    strides = [arith.index_cast(i32, s) for s in meta[2 + ddr.rank:]]
    total = dims[0]
    for d in dims[1:]:
        total = arith.muli(total, d)
    rows, cols = src.valid
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        with kb.loop(0, src.pitch, src.width) as lcol:
            c = lcol.induction_variable
            flat = _index_chunk(lc, index, r, c)
            ok = arith.andi(_in_range(flat, arith.index_cast(ir.IndexType.get(), total)),
                            _in_range(lane_indices(src.width, c, i32), cols))
            offsets, rest = splat(vt, 0), flat
            for d, stride in reversed(list(zip(dims, strides))):
                dv = vector.broadcast(vt, d)
                offsets = arith.addi(offsets, arith.muli(arith.remui(rest, dv), vector.broadcast(vt, stride)))
                rest = arith.divui(rest, dv)
            vector.scatter(None, ddr.memref, [kb.idx(0)] * ddr.rank, offsets, ok, read_chunk(kb, src, r, c))
    return ddr


def register(table: dict) -> None:
    table["tile.gather"] = lower_gather
    table["tile.scatter"] = lower_scatter
    table["tile.gather_mask"] = lower_gather_mask
    table["tile.scatter_mask"] = lower_scatter_mask
    table["tile.mscatter"] = lower_mscatter
    table["tile.scatter_update"] = lower_scatter_update
