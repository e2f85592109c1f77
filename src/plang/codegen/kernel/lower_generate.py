"""Tiles generated from their position: `arange` (start ± column along the last axis) and
`tri` (a 0/1 triangular mask over the valid region, 0 elsewhere). Both are lazy chunk
functions of (row, column): the lane offsets come from `vector.step`, so no element loop."""

from __future__ import annotations

from ...dtypes import INT64, DataType
from .builder import geometry, mlir_type
from .context import LowerContext, tile_dims
from .lower_scalar import convert, lower_scalar
from .mlir import arith, ir, vector
from .vector_math import splat
from .vectors import LazyTile


def lane_indices(width: int, first: ir.Value, elem: ir.Type) -> ir.Value:
    """The vector (first, first + 1, ..., first + width - 1) of integer type `elem`."""
    steps = arith.index_cast(ir.VectorType.get([width], elem),
                             vector.step(ir.VectorType.get([width], ir.IndexType.get())))
    return arith.addi(vector.broadcast(steps.type, arith.index_cast(elem, first)), steps)


def generated_tile(lc: LowerContext, chunk_of) -> object:
    """The current call's tile from `chunk_of(width)` -> chunk(r, c): lazy when deferred."""
    t = lc.call.type
    rows, cols = tile_dims(t, lc.where(lc.call.op.name))
    width, pitch = geometry(t.dtype, cols)
    lazy = LazyTile(t.dtype, rows, cols, pitch, width, lc.valid_of(t), chunk_of(width))
    if lc.defer:
        return lazy
    out = lc.result_tile()
    lc.store_result(out, lazy)
    return out


def lower_arange(lc: LowerContext, short: str, a: dict) -> object:
    d: DataType = lc.call.type.dtype
    v, sd = lower_scalar(lc, a["start"])
    start = convert(v, sd, d)  # wraps like torch's int64 -> dtype conversion
    descending = bool(a.get("descending"))
    elem = mlir_type(d)

    def chunk_of(width: int):
        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            cols = lane_indices(width, c, elem)
            s = vector.broadcast(cols.type, start)
            return arith.subi(s, cols) if descending else arith.addi(s, cols)
        return chunk
    return generated_tile(lc, chunk_of)


def lower_tri(lc: LowerContext, short: str, a: dict) -> object:
    t = lc.call.type
    v, sd = lower_scalar(lc, a["diagonal"])
    diagonal = convert(v, sd, INT64)
    upper = bool(a.get("upper"))
    vr, vc = lc.valid_of(t)
    i64 = ir.IntegerType.get_signless(64)
    elem = mlir_type(t.dtype)

    def chunk_of(width: int):
        vt = ir.VectorType.get([width], elem)
        one, zero = splat(vt, 1), splat(vt, 0)
        if t.dtype.is_float:
            one, zero = splat(vt, 1.0), splat(vt, 0.0)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            j = lane_indices(width, c, i64)
            edge = vector.broadcast(j.type, arith.addi(arith.index_cast(i64, r), diagonal))
            inside = arith.cmpi(arith.CmpIPredicate.sge if upper else arith.CmpIPredicate.sle, j, edge)
            last = vector.broadcast(j.type, arith.index_cast(i64, vc))
            in_cols = arith.cmpi(arith.CmpIPredicate.slt, j, last)
            in_row = vector.broadcast(ir.VectorType.get([width], ir.IntegerType.get_signless(1)),
                                      arith.cmpi(arith.CmpIPredicate.slt, r, vr))
            return arith.select(arith.andi(arith.andi(inside, in_cols), in_row), one, zero)
        return chunk
    return generated_tile(lc, chunk_of)


def register(table: dict) -> None:
    table["tile.arange"] = lower_arange
    table["tile.tri"] = lower_tri
