"""Chunk-level helpers: vector types, loads/stores of tile chunks, dtype conversions between
storage and compute types, and the row × chunk loop every vector op is built on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ...dtypes import BF16, FP16, FP32, DataType
from .builder import KernelBuilder, TileBuf, compute_dtype, mlir_type
from .mlir import arith, ir, memref, vector


def vtype(width: int, dtype: DataType) -> ir.VectorType:
    return ir.VectorType.get([width], mlir_type(dtype))


def to_compute(v: ir.Value, dtype: DataType) -> ir.Value:
    """Widen FP16 / BF16 values (scalar or vector) to FP32; others pass through."""
    if dtype in (FP16, BF16):
        t = vtype(v.type.shape[0], FP32) if isinstance(v.type, ir.VectorType) else mlir_type(FP32)
        return arith.extf(t, v)
    return v


def to_storage(v: ir.Value, dtype: DataType) -> ir.Value:
    """Round an FP32 compute value back to FP16 / BF16 (round to nearest even)."""
    if dtype in (FP16, BF16):
        t = vtype(v.type.shape[0], dtype) if isinstance(v.type, ir.VectorType) else mlir_type(dtype)
        return arith.truncf(t, v)
    return v


def load_chunk(tile: TileBuf, offset: ir.Value) -> ir.Value:
    return vector.load(vtype(tile.width, tile.dtype), tile.buf, [offset])


def store_chunk(tile: TileBuf, offset: ir.Value, v: ir.Value) -> None:
    vector.store(v, tile.buf, [offset])


def load_elem(tile: TileBuf, offset: ir.Value) -> ir.Value:
    return memref.load(tile.buf, [offset])


@dataclass(frozen=True)
class Operand:
    """An input of a chunk loop: a tile read whole (`full`), one value per row (`row`,
    an [M, 1] tile), one row for all rows (`col`, a [1, N] tile) or a scalar value (given in
    the form the loop computes in: compute type with `convert`, storage type without)."""

    kind: str
    tile: TileBuf | None = None
    scalar: ir.Value | None = None
    dtype: DataType | None = None


def full(t: TileBuf) -> Operand:
    return Operand("full", t, dtype=t.dtype)


def per_row(t: TileBuf) -> Operand:
    return Operand("row", t, dtype=t.dtype)


def per_col(t: TileBuf) -> Operand:
    return Operand("col", t, dtype=t.dtype)


def scalar(v: ir.Value, dtype: DataType) -> Operand:
    return Operand("scalar", scalar=v, dtype=dtype)


ChunkFn = Callable[[Sequence[ir.Value]], ir.Value]


def map_chunks(kb: KernelBuilder, out: TileBuf, operands: Sequence[Operand], fn: ChunkFn,
               convert: bool = True) -> None:
    """out[r, c] = fn(operands at [r, c]) over every row and every chunk of `out`.

    With `convert`, operands arrive in their compute dtype (FP16/BF16 widened) and the
    result is rounded back to `out.dtype`; otherwise values are passed in storage form."""
    width = out.width
    for op in operands:
        if op.tile is not None and op.kind in ("full", "col") and op.tile.pitch != out.pitch:
            raise AssertionError("map_chunks: operand pitch differs from the output's")
    hoisted = []
    for op in operands:
        if op.kind == "scalar":
            v = op.scalar  # already in compute form (convert) or storage form
            hoisted.append(vector.broadcast(ir.VectorType.get([width], v.type), v))
        else:
            hoisted.append(None)
    with kb.loop(0, out.rows) as rows:
        r = rows.induction_variable
        base = arith.muli(r, kb.idx(out.pitch))
        row_vals = []
        for op in operands:
            if op.kind == "row":
                e = load_elem(op.tile, arith.muli(r, kb.idx(op.tile.pitch)))
                e = to_compute(e, op.dtype) if convert else e
                row_vals.append(vector.broadcast(ir.VectorType.get([width], e.type), e))
            else:
                row_vals.append(None)
        with kb.loop(0, out.pitch, width) as cols:
            c = cols.induction_variable
            off = arith.addi(base, c)
            vals = []
            for op, h, rv in zip(operands, hoisted, row_vals):
                if op.kind == "full":
                    v = load_chunk(op.tile, off)
                elif op.kind == "col":
                    v = load_chunk(op.tile, c)
                else:
                    vals.append(h if h is not None else rv)
                    continue
                vals.append(to_compute(v, op.dtype) if convert else v)
            res = fn(vals)
            store_chunk(out, off, to_storage(res, out.dtype) if convert else res)


def is_half(dtype: DataType) -> bool:
    return compute_dtype(dtype) is not dtype
