"""Data-dependent indexing: `gather` (flat, or along any axis: `torch.gather`)
and `scatter` (along the last axis of a 2D tile), and their mask-pattern forms `gather_mask` /
`scatter_mask` (column k of the compact side is column k * stride + phase of the wide side),
as vector gathers / scatters (`vector.gather` / `vector.scatter`, AVX-512 gather / scatter
instructions for 32-bit data); `mscatter` scatters a tile's elements to flat indices of a DDR
tensor and `mgather` gathers rows or elements of one into a tile; `gatherb` copies 32-byte
blocks of a tile's bytes; `scatter_update` replaces whole rows, chunk by chunk.

Indices are checked lane by lane: an out-of-range index reads 0 (gather) or writes nothing
(scatter) instead of touching memory outside the tile; torch would raise. Scatter writes
only `src`'s valid region, in row-major order, so of duplicate indices the last one wins
(as torch's CPU scatter does).
"""

from __future__ import annotations

from ... import ir as pir
from ...dtypes import DataType
from ...ir.ops.common import mode_name
from ...ir.ops.indexing import BLOCK_BYTES, COALESCE, GATHER_OOB
from ...ir.ops.masks import stride_phase
from .builder import TileBuf
from .context import DdrTensor, LowerContext
from .lower_generate import generated_tile, lane_indices
from .lower_views import copy_rows, typed_view
from .mlir import arith, ir, memref, scf, vector
from .vector_math import splat
from .vectors import (
    LazyTile,
    full,
    load_elem,
    map_chunks,
    read_chunk,
    read_chunk_masked,
    store_chunk,
    vtype,
)

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


def _flat_offsets(kb, ddr: DdrTensor, flat: ir.Value) -> ir.Value:
    """Element offsets into `ddr` (from its base) of the flat, row-major indices `flat`
    (i32 lanes), through the tensor's extents and strides."""
    i32 = _I32(32)
    dims = [arith.index_cast(i32, ddr.dim(k)) for k in range(ddr.rank)]
    meta = list(memref.extract_strided_metadata(ddr.memref))
    strides = [arith.index_cast(i32, s) for s in meta[2 + ddr.rank:]]
    offsets, rest = splat(flat.type, 0), flat
    for d, stride in reversed(list(zip(dims, strides))):
        dv = vector.broadcast(flat.type, d)
        offsets = arith.addi(offsets, arith.muli(arith.remui(rest, dv), vector.broadcast(flat.type, stride)))
        rest = arith.divui(rest, dv)
    return offsets


def _element_count(kb, ddr: DdrTensor, dims: range) -> ir.Value:
    total = kb.idx(1)
    for k in dims:
        total = arith.muli(total, ddr.dim(k))
    return total


def lower_mscatter(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    """output_tensor.reshape(-1)[idx[i, j]] = src[i, j], one vector scatter per chunk: the
    flat index splits into the tensor's coordinates, which its strides turn into offsets."""
    src, index, ddr = lc.operand(a["src"]), lc.operand(a["idx"]), lc.ddr(a["output_tensor"])
    _same_width(lc, "tile.mscatter", src.width, index)
    kb = lc.kb
    total = _element_count(kb, ddr, range(ddr.rank))
    rows, cols = src.valid
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        with kb.loop(0, src.pitch, src.width) as lcol:
            c = lcol.induction_variable
            flat = _index_chunk(lc, index, r, c)
            ok = arith.andi(_in_range(flat, total), _in_range(lane_indices(src.width, c, _I32(32)), cols))
            vector.scatter(None, ddr.memref, [kb.idx(0)] * ddr.rank, _flat_offsets(kb, ddr, flat), ok,
                           read_chunk(kb, src, r, c))
    return ddr


def _oob_policy(policy: str, keys: ir.Value, extent: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(keys under `policy`, the keys inside [0, extent)); keys and extent are unsigned."""
    if policy == "clamp":
        keys = arith.minui(keys, arith.subi(extent, _one_like(extent)))
    elif policy == "wrap":
        keys = arith.remui(keys, extent)
    return keys, arith.cmpi(arith.CmpIPredicate.ult, keys, extent)


def _one_like(v: ir.Value) -> ir.Value:
    return splat(v.type, 1) if isinstance(v.type, ir.VectorType) else arith.constant(v.type, 1)


def lower_mgather(lc: LowerContext, short: str, a: dict) -> object:
    """Rows (coalesce='row') or flat elements of a DDR tensor at unsigned indices read from a
    tile (Vec) or a DDR tensor (Mat); an index past the end follows the gather_oob policy and
    reads zeros unless clamped or wrapped; cells outside the valid region are 0."""
    kb, t = lc.kb, lc.call.type
    mem = lc.ddr(a["mem"])
    from_ddr = not isinstance(a["idx"].type, pir.TileType)
    idx = lc.ddr(a["idx"]) if from_ddr else lc.tile(a["idx"])
    policy = mode_name(a["gather_oob"], GATHER_OOB)
    valid_rows, valid_cols = lc.valid_of(t)
    i32 = _I32(32)

    def lanes_left(r: ir.Value, c: ir.Value) -> ir.Value:
        inside = arith.cmpi(arith.CmpIPredicate.ult, r, valid_rows)
        return arith.select(inside, arith.subi(valid_cols, c), kb.idx(0))

    if mode_name(a["coalesce"], COALESCE) == "row":
        rows = _element_count(kb, mem, range(mem.rank - 1))
        along = not from_ddr and a["idx"].type.static_shape[1] == 1  # an [R, 1] index tile

        def key(r: ir.Value) -> ir.Value:
            if from_ddr:
                return memref.load(idx.memref, [kb.idx(0), r])
            return load_elem(idx, arith.muli(r, kb.idx(idx.pitch)) if along else r)

        def chunk_of(width: int):
            vt = vtype(width, t.dtype)
            pad = kb.const_of(vt.element_type, 0)
            permutation = _flat_map(mem.rank)

            def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
                row, ok = _oob_policy(policy, arith.index_castui(ir.IndexType.get(), key(r)), rows)
                row = arith.select(ok, row, kb.idx(0))
                at = []
                for k in reversed(range(1, mem.rank - 1)):
                    at.append(arith.remui(row, mem.dim(k)))
                    row = arith.divui(row, mem.dim(k))
                at = [row, *at[::-1], c]
                lanes = arith.select(ok, lanes_left(r, c), kb.idx(0))
                return read_chunk_masked(kb, vt, mem.memref, at, permutation, pad, lanes)
            return chunk
        return generated_tile(lc, chunk_of)

    total = arith.index_cast(i32, _element_count(kb, mem, range(mem.rank)))

    def chunk_of(width: int):
        keys_type = ir.VectorType.get([width], i32)
        vt = vtype(width, t.dtype)
        no_key = arith.constant(i32, 0)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            lanes = lanes_left(r, c)
            if from_ddr:
                keys = read_chunk_masked(kb, keys_type, idx.memref, [r, c], _flat_map(2), no_key, lanes)
            else:
                at = arith.addi(arith.muli(r, kb.idx(idx.pitch)), c)
                keys = read_chunk_masked(kb, keys_type, idx.buf, [at], _flat_map(), no_key, lanes)
            keys, ok = _oob_policy(policy, keys, vector.broadcast(keys_type, total))
            end = arith.addi(c, arith.maxsi(lanes, kb.idx(0)))
            ok = arith.andi(ok, _in_range(lane_indices(width, c, i32), end))
            keys = arith.select(ok, keys, splat(keys_type, 0))  # no lane addresses past the tensor
            return vector.gather(vt, mem.memref, [kb.idx(0)] * mem.rank, _flat_offsets(kb, mem, keys), ok,
                                 splat(vt, 0.0 if t.dtype.is_float else 0))
        return chunk
    return generated_tile(lc, chunk_of)


def _flat_map(rank: int = 1) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))


def _padded_bytes(kb, src: TileBuf) -> tuple[ir.Value, int]:
    """(src's bytes as the reference lays a tile out: row-major, each row padded with zeros to
    whole 32-byte blocks, and their count)."""
    size = src.dtype.itemsize
    per_row = -(-src.cols * size // BLOCK_BYTES) * BLOCK_BYTES // size
    raw = kb.alloc_scratch(_I32(8), src.rows * per_row * size)
    packed = typed_view(kb, raw, src.rows * per_row, src.dtype)
    copy_rows(kb, src.rows, src.cols, src.buf, src.pitch, packed, per_row)
    if per_row > src.cols:
        zero = kb.const(src.dtype, 0)
        with kb.loop(0, src.rows) as lr:
            base = arith.muli(lr.induction_variable, kb.idx(per_row))
            with kb.loop(src.cols, per_row) as lc_:
                memref.store(zero, packed, [arith.addi(base, lc_.induction_variable)])
    return raw, src.rows * per_row * size


def lower_gatherb(lc: LowerContext, short: str, a: dict) -> object:
    """Block (r, j) of the result is the 32 bytes of the padded source at byte offset[r, j]
    (bytes past its end read 0; blocks outside offset's valid region are 0), gathered into a
    byte buffer the result's chunks then read as its dtype."""
    src, offset = lc.tile(a["src"]), lc.tile(a["offset"])
    kb, dtype = lc.kb, lc.call.type.dtype
    i8 = _I32(8)
    data, total = _padded_bytes(kb, src)
    rows, blocks = offset.rows, offset.cols
    gathered = kb.alloc_scratch(i8, rows * blocks * BLOCK_BYTES)
    block = ir.VectorType.get([BLOCK_BYTES], i8)
    zero = kb.const_of(i8, 0)
    valid_rows, valid_blocks = offset.valid
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        row_inside = arith.cmpi(arith.CmpIPredicate.ult, r, valid_rows)
        with kb.loop(0, blocks) as lj:
            j = lj.induction_variable
            inside = arith.andi(row_inside, arith.cmpi(arith.CmpIPredicate.ult, j, valid_blocks))
            at = arith.index_castui(ir.IndexType.get(),
                                    load_elem(offset, arith.addi(arith.muli(r, kb.idx(offset.pitch)), j)))
            # lanes in [0, 32]: a mask count is 32-bit; and an index past the buffer is undefined
            # even with every lane masked off
            left = arith.maxsi(arith.minsi(arith.subi(kb.idx(total), at), kb.idx(BLOCK_BYTES)), kb.idx(0))
            lanes = arith.select(inside, left, kb.idx(0))
            at = arith.select(arith.cmpi(arith.CmpIPredicate.sgt, lanes, kb.idx(0)), at, kb.idx(0))
            v = read_chunk_masked(kb, block, data, [at], _flat_map(), zero, lanes)
            vector.store(v, gathered, [arith.muli(arith.addi(arith.muli(r, kb.idx(blocks)), j),
                                                  kb.idx(BLOCK_BYTES))])
    cols = blocks * BLOCK_BYTES // dtype.itemsize
    result = typed_view(kb, gathered, rows * cols, dtype)

    def chunk_of(width: int):
        vt = vtype(width, dtype)
        pad = kb.const_of(vt.element_type, 0)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            at = arith.addi(arith.muli(r, kb.idx(cols)), c)
            return read_chunk_masked(kb, vt, result, [at], _flat_map(), pad, arith.subi(kb.idx(cols), c))
        return chunk
    return generated_tile(lc, chunk_of)


def register(table: dict) -> None:
    table["tile.gather"] = lower_gather
    table["tile.scatter"] = lower_scatter
    table["tile.gather_mask"] = lower_gather_mask
    table["tile.scatter_mask"] = lower_scatter_mask
    table["tile.mscatter"] = lower_mscatter
    table["tile.gatherb"] = lower_gatherb
    table["tile.mgather"] = lower_mgather
    table["tile.scatter_update"] = lower_scatter_update
