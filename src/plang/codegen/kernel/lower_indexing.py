"""Data-dependent indexing: `gather` (flat, along the last axis, or along axis 0 of a 2D tile)
and `scatter` (along the last axis of a 2D tile), as vector gathers / scatters
(`vector.gather` / `vector.scatter`, AVX-512 gather / scatter instructions for 32-bit data).

Indices are checked lane by lane: an out-of-range index reads 0 (gather) or writes nothing
(scatter) instead of touching memory outside the tile; torch would raise. Scatter writes
only `src`'s valid region, in row-major order, so of duplicate indices the last one wins
(as torch's CPU scatter does).
"""

from __future__ import annotations

from ...dtypes import DataType
from .builder import TileBuf
from .context import LowerContext
from .lower_generate import generated_tile, lane_indices
from .mlir import arith, ir, vector
from .vector_math import splat
from .vectors import LazyTile, full, map_chunks, read_chunk, vtype

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


def _gather_axis(lc: LowerContext, src: TileBuf, dim) -> str:
    rank = lc.call.args[0].type.rank
    if dim is None:
        return "flat"
    axis = dim % rank
    if axis == rank - 1:
        idx_shape = lc.call.args[1].type.static_shape
        if rank > 2 and tuple(idx_shape[:-1]) != tuple(lc.call.args[0].type.static_shape[:-1]):
            raise lc.error("tile.gather along the last axis of a rank > 2 tile needs index's leading "
                           "dims to equal input's")
        return "last"
    if rank == 2 and axis == 0:
        return "first"
    raise lc.error(f"tile.gather along axis {axis} of a rank-{rank} tile is not supported by the kernel "
                   "backend (axis 0 of a 2D tile or the last axis only)")


def lower_gather(lc: LowerContext, short: str, a: dict) -> object:
    src, index = lc.tile(a["input"]), lc.operand(a["index"])
    mode = _gather_axis(lc, src, a.get("dim"))
    kb = lc.kb
    dtype: DataType = lc.call.type.dtype
    i32 = _I32(32)

    def chunk_of(width: int):
        _same_width(lc, "tile.gather", width, index)
        vt = vtype(width, dtype)
        zero = splat(vt, 0.0 if dtype.is_float else 0)
        pitch = splat(ir.VectorType.get([width], i32), src.pitch)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            idx = _index_chunk(lc, index, r, c)
            if mode == "flat":
                ok = _in_range(idx, kb.idx(src.rows * src.cols))
                offsets = idx
                if src.pitch != src.cols:
                    cols = splat(idx.type, src.cols)
                    offsets = arith.addi(arith.muli(arith.divui(idx, cols), pitch), arith.remui(idx, cols))
            elif mode == "last":
                ok = _in_range(idx, kb.idx(src.cols))
                base = arith.index_cast(i32, arith.muli(r, kb.idx(src.pitch)))
                offsets = arith.addi(vector.broadcast(idx.type, base), idx)
            else:
                cols = lane_indices(width, c, i32)
                ok = arith.andi(_in_range(idx, kb.idx(src.rows)), _in_range(cols, kb.idx(src.cols)))
                offsets = arith.addi(arith.muli(idx, pitch), cols)
            return vector.gather(vt, src.buf, [kb.idx(0)], offsets, ok, zero)
        return chunk
    return generated_tile(lc, chunk_of)


def lower_scatter(lc: LowerContext, short: str, a: dict) -> TileBuf:
    dst, index, src = lc.tile(a["input"]), lc.operand(a["index"]), lc.operand(a["src"])
    _same_width(lc, "tile.scatter", src.width, index)
    kb = lc.kb
    out = lc.result_tile()
    map_chunks(kb, out, [full(dst)], lambda v: v[0], convert=False)
    rows, cols = src.valid
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        base = vector.broadcast(ir.VectorType.get([src.width], _I32(32)),
                                arith.index_cast(_I32(32), arith.muli(r, kb.idx(out.pitch))))
        with kb.loop(0, src.pitch, src.width) as lcol:
            c = lcol.induction_variable
            idx = _index_chunk(lc, index, r, c)
            lanes = lane_indices(src.width, c, _I32(32))
            ok = arith.andi(_in_range(idx, kb.idx(out.cols)), _in_range(lanes, cols))
            vector.scatter(None, out.buf, [kb.idx(0)], arith.addi(base, idx), ok, read_chunk(kb, src, r, c))
    return out


def register(table: dict) -> None:
    table["tile.gather"] = lower_gather
    table["tile.scatter"] = lower_scatter
