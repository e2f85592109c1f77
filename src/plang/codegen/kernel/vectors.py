"""Chunk-level helpers: vector types, loads/stores of tile chunks, dtype conversions between
storage and compute types, and the row × chunk loop every vector op is built on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ...dtypes import BF16, FP16, FP32, DataType
from . import isa
from .builder import KernelBuilder, TileBuf, geometry, mlir_type
from .mlir import arith, ir, memref, scf, vector
from .pack_cache import DdrOrigin


def vtype(width: int, dtype: DataType) -> ir.VectorType:
    return ir.VectorType.get([width], mlir_type(dtype))


def to_compute(v: ir.Value, dtype: DataType) -> ir.Value:
    """Widen FP16 / BF16 values (scalar or vector) to FP32; others pass through."""
    if dtype in (FP16, BF16):
        t = vtype(v.type.shape[0], FP32) if isinstance(v.type, ir.VectorType) else mlir_type(FP32)
        return isa.extf(t, v)
    return v


def to_storage(v: ir.Value, dtype: DataType) -> ir.Value:
    """Round an FP32 compute value back to FP16 / BF16 (round to nearest even)."""
    if dtype in (FP16, BF16):
        t = vtype(v.type.shape[0], dtype) if isinstance(v.type, ir.VectorType) else mlir_type(dtype)
        return isa.truncf(t, v)
    return v


def load_chunk(tile: TileBuf, offset: ir.Value) -> ir.Value:
    return vector.load(vtype(tile.width, tile.dtype), tile.buf, [offset])


def store_chunk(tile: TileBuf, offset: ir.Value, v: ir.Value) -> None:
    vector.store(v, tile.buf, [offset])


def load_elem(tile: TileBuf, offset: ir.Value) -> ir.Value:
    return memref.load(tile.buf, [offset])


def _lanes_mask(width: int, lanes: ir.Value) -> ir.Value:
    return vector.create_mask(ir.VectorType.get([width], ir.IntegerType.get_signless(1)), [lanes])


def _whole(kb: KernelBuilder, lanes: ir.Value, width: int, results: list) -> scf.IfOp:
    """`scf.if lanes >= width`: a whole chunk takes the then-branch (plain transfer), a
    partial one the else-branch (masked transfer). Most chunks are whole, and masked
    transfers cost mask arithmetic (often spilled) on every chunk."""
    whole = arith.cmpi(arith.CmpIPredicate.sge, lanes, kb.idx(width))
    return scf.IfOp(whole, results, has_else=True)


def read_chunk_masked(kb: KernelBuilder, vt: ir.VectorType, source: ir.Value, index: list[ir.Value],
                      permutation: ir.AffineMapAttr, pad: ir.Value, lanes: ir.Value) -> ir.Value:
    """The `vt` chunk of `source` at `index` whose first `lanes` lanes are read (the rest
    are `pad`; `lanes` <= 0 reads nothing). 16-bit float chunks cross the branch as i16
    (`isa.branch_type`): LLVM would otherwise convert a BF16 vector at the join."""
    carried = isa.branch_type(vt)
    op = _whole(kb, lanes, vt.shape[0], [carried])
    with ir.InsertionPoint(op.then_block):
        scf.yield_([isa.to_branch(carried, vector.load(vt, source, index))])
    with ir.InsertionPoint(op.else_block):
        mask = _lanes_mask(vt.shape[0], lanes)
        scf.yield_([isa.to_branch(carried, vector.transfer_read(vt, source, index, permutation, pad, [True],
                                                                mask=mask))])
    return isa.to_branch(vt, op.result)


def write_chunk_masked(kb: KernelBuilder, v: ir.Value, dest: ir.Value, index: list[ir.Value],
                       permutation: ir.AffineMapAttr, lanes: ir.Value,
                       nontemporal_if: ir.Value | None = None) -> None:
    """Write the first `lanes` lanes of chunk `v` to `dest` at `index`. With
    `nontemporal_if` (an i1 that must imply a 64-byte aligned address), a whole chunk is
    written with aligned non-temporal stores when it holds (see
    `KernelBuilder.streaming_store`)."""
    op = _whole(kb, lanes, v.type.shape[0], [])
    with ir.InsertionPoint(op.then_block):
        if nontemporal_if is None:
            vector.store(v, dest, index)
        else:
            aligned = scf.IfOp(nontemporal_if, [], has_else=True)
            with ir.InsertionPoint(aligned.then_block):
                vector.store(v, dest, index, nontemporal=True, alignment=64)
                scf.yield_([])
            with ir.InsertionPoint(aligned.else_block):
                vector.store(v, dest, index)
                scf.yield_([])
        scf.yield_([])
    with ir.InsertionPoint(op.else_block):
        mask = _lanes_mask(v.type.shape[0], lanes)
        vector.transfer_write(None, v, dest, index, permutation, [True], mask=mask)
        scf.yield_([])


@dataclass(frozen=True)
class InPlace:
    """Where a 2-D DDR load's tile lies in its tensor, for a consumer that reads the tile's
    elements where they are: the tensor's memref, the tile's first row and column in it, and
    `whole`: whether the whole tile lies inside the tensor (only then may it be read there)."""

    memref: ir.Value
    row: ir.Value
    col: ir.Value
    whole: ir.Value


@dataclass
class LazyTile:
    """A tile not stored anywhere yet: `chunk(r, c)` computes its storage-form vector at row
    `r`, columns [c, c + width). Single-use elementwise chains stay lazy, so a load → ops →
    store chain streams through registers without touching a tile buffer."""

    dtype: DataType
    rows: int
    cols: int
    pitch: int
    width: int
    valid: tuple[ir.Value, ir.Value]
    chunk: Callable[[ir.Value, ir.Value], ir.Value]
    prefetch: Callable[[ir.Value, ir.Value], None] | None = None  # a DDR load's: see prefetch_ahead
    origin: DdrOrigin | None = None  # a DDR load's, where its panels may be cached (pack_cache)
    column: Callable[[ir.Value, ir.Value, int], ir.Value] | None = None
    """A DDR load's `column(r, c, w)` where its rows run along one tensor dim: elements
    (r + i, c), i < w, as one vector (a gather; zero outside the window), which a transpose
    feeding a matmul's B streams instead of transposing the tile into a buffer."""
    transpose_of: LazyTile | None = None
    """The DDR load a lazy transpose reads, where it is whole 16 x 16 blocks of 32-bit words
    (FP32 elements, or BF16 k pairs for the pair dot): a matmul packs its B from this tile by
    block transposes in registers instead of gathering down its columns."""
    in_place: InPlace | None = None  # a 2-D DDR load's: a matmul's A is read there (no copy)


def transpose16(rows: list[ir.Value]) -> list[ir.Value]:
    """The 16 x 16 block held as 16 row vectors of 16 lanes, transposed by four rounds of
    shuffles (round b swaps, between rows r and r + b, the b-wide column groups off the
    diagonal)."""
    rows = list(rows)
    for b in (1, 2, 4, 8):  # (mask of row r, mask of row r + b) over [row r, row r + b]
        low = [16 + p - b if p & b else p for p in range(16)]
        high = [16 + p if p & b else p + b for p in range(16)]
        for r in range(16):
            if not r & b:
                rows[r], rows[r + b] = (vector.shuffle(rows[r], rows[r + b], low),
                                        vector.shuffle(rows[r], rows[r + b], high))
    return rows


PREFETCH_ROWS = 4
"""How many rows ahead a copy of a strided DDR tile prefetches."""


def prefetch_ahead(kb: KernelBuilder, t: TileBuf | LazyTile, r: ir.Value, c: ir.Value) -> None:
    """Prefetch the chunk `PREFETCH_ROWS` rows below row `r`, column `c` of a lazy DDR tile
    (clamped to its last row) while row `r` is copied. Hardware prefetchers stop at page
    boundaries, so a copy walking a tile whose rows lie a page apart would otherwise wait
    for every new row (1024^3 fp32 matmul from 256 x 256 tiles: +5%)."""
    if isinstance(t, LazyTile) and t.prefetch is not None:
        t.prefetch(arith.minui(arith.addi(r, kb.idx(PREFETCH_ROWS)), kb.idx(t.rows - 1)), c)


def read_chunk(kb: KernelBuilder, t: TileBuf | LazyTile, r: ir.Value, c: ir.Value) -> ir.Value:
    """The storage-form chunk of `t` at row `r`, column `c`."""
    if isinstance(t, LazyTile):
        return t.chunk(r, c)
    return load_chunk(t, arith.addi(arith.muli(r, kb.idx(t.pitch)), c))


@dataclass(frozen=True)
class Operand:
    """An input of a chunk loop: a tile read whole (`full`, buffer or lazy), one value per
    row (`row`, an [M, 1] tile), one row for all rows (`col`, a [1, N] tile) or a scalar
    value (given in the form the loop computes in: compute type with `convert`, storage
    type without)."""

    kind: str
    tile: TileBuf | LazyTile | None = None
    scalar: ir.Value | None = None
    dtype: DataType | None = None


def full(t: TileBuf | LazyTile) -> Operand:
    return Operand("full", t, dtype=t.dtype)


def per_row(t: TileBuf) -> Operand:
    return Operand("row", t, dtype=t.dtype)


def per_col(t: TileBuf) -> Operand:
    return Operand("col", t, dtype=t.dtype)


def scalar(v: ir.Value, dtype: DataType) -> Operand:
    return Operand("scalar", scalar=v, dtype=dtype)


ChunkFn = Callable[[Sequence[ir.Value]], ir.Value]


def lazy_map(kb: KernelBuilder, rows: int, cols: int, dtype: DataType,
             valid: tuple[ir.Value, ir.Value], operands: Sequence[Operand], fn: ChunkFn,
             convert: bool = True) -> LazyTile:
    """The lazy [rows, cols] tile fn(operands) of element type `dtype`.

    With `convert`, operands arrive in their compute dtype (FP16/BF16 widened) and the
    result is rounded back to `dtype`; otherwise values are passed in storage form."""
    width, pitch = geometry(dtype, cols)

    def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
        vals = []
        for op in operands:
            if op.kind == "scalar":
                vals.append(vector.broadcast(ir.VectorType.get([width], op.scalar.type), op.scalar))
                continue
            if op.kind == "full":
                v = read_chunk(kb, op.tile, r, c)
            elif op.kind == "col":
                v = load_chunk(op.tile, c)
            elif op.tile.cols > 1:  # a packed row vector: each row's block repeats along the row
                v = _packed_row_chunk(kb, op.tile, r, c, width)
            else:
                e = load_elem(op.tile, arith.muli(r, kb.idx(op.tile.pitch)))
                e = to_compute(e, op.dtype) if convert else e
                vals.append(vector.broadcast(ir.VectorType.get([width], e.type), e))
                continue
            vals.append(to_compute(v, op.dtype) if convert else v)
        res = fn(vals)
        return to_storage(res, dtype) if convert else res

    return LazyTile(dtype, rows, cols, pitch, width, valid, chunk)


def _packed_row_chunk(kb: KernelBuilder, t: TileBuf, r: ir.Value, c: ir.Value, width: int) -> ir.Value:
    """Columns [c, c + width) of row `r` of a packed row vector `t` ([M, P]): element j is
    t[r, j % P]."""
    block = t.cols
    base = arith.muli(r, kb.idx(t.pitch))
    if width % block == 0:
        v = vector.load(vtype(block, t.dtype), t.buf, [base])
        return vector.shuffle(v, v, [lane % block for lane in range(width)])
    if block % width == 0:  # chunks start at multiples of width, so c % P + width <= P
        return vector.load(vtype(width, t.dtype), t.buf, [arith.addi(base, arith.remui(c, kb.idx(block)))])
    raise AssertionError(f"packed row vector of {block} columns vs {width}-lane chunks")


def materialize(kb: KernelBuilder, out: TileBuf, lazy: LazyTile) -> None:
    """Store every chunk of `lazy` into `out` (same shape)."""
    with kb.loop(0, out.rows) as rows:
        r = rows.induction_variable
        base = arith.muli(r, kb.idx(out.pitch))
        with kb.loop(0, out.pitch, out.width) as cols:
            c = cols.induction_variable
            store_chunk(out, arith.addi(base, c), lazy.chunk(r, c))
            prefetch_ahead(kb, lazy, r, c)


def map_chunks(kb: KernelBuilder, out: TileBuf, operands: Sequence[Operand], fn: ChunkFn,
               convert: bool = True) -> None:
    """out[r, c] = fn(operands at [r, c]) over every row and chunk of `out` (see `lazy_map`)."""
    materialize(kb, out, lazy_map(kb, out.rows, out.cols, out.dtype, out.valid, operands, fn, convert))


def copy_tile(kb: KernelBuilder, src: TileBuf | LazyTile, dst: TileBuf) -> None:
    """Compute or copy `src` into `dst` (nothing to do when they share a buffer)."""
    if isinstance(src, LazyTile):
        materialize(kb, dst, src)
    elif src.buf != dst.buf:
        map_chunks(kb, dst, [full(src)], lambda v: v[0], convert=False)
