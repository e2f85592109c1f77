"""Packed predicate masks (`ir/ops/predicate.py`): `pack` turns a lazy BOOL tile into bits,
8 elements a byte (bit c % 8 of byte c // 8; padding bytes 0), one scalar row loop;
`unpack` reads the i1 lanes of a chunk back with a byte gather, a shift and a mask."""

from __future__ import annotations

from ...dtypes import BOOL
from ...ir.ops.predicate import BITS
from .builder import TileBuf
from .context import LowerContext
from .lower_generate import lane_indices
from .mlir import arith, ir, memref, vector
from .vector_math import splat
from .vectors import LazyTile, load_elem, materialize, store_chunk, vtype


def pack(lc: LowerContext, bools: LazyTile) -> TileBuf:
    """The call's packed mask of the [rows, cols] BOOL tile `bools`."""
    kb = lc.kb
    flags = kb.alloc_tile(BOOL, bools.rows, bools.cols)
    materialize(kb, flags, bools)
    out = lc.result_tile()
    i8 = ir.IntegerType.get_signless(8)
    with kb.loop(0, out.rows) as lr:
        r = lr.induction_variable
        row = arith.muli(r, kb.idx(out.pitch))
        with kb.loop(0, out.pitch, out.width) as lcol:
            store_chunk(out, arith.addi(row, lcol.induction_variable), splat(vtype(out.width, out.dtype), 0))
        for byte in range(-(-bools.cols // BITS)):
            acc = arith.constant(i8, 0)
            for bit in range(min(BITS, bools.cols - byte * BITS)):
                at = arith.addi(arith.muli(r, kb.idx(flags.pitch)), kb.idx(byte * BITS + bit))
                flag = arith.andi(load_elem(flags, at), arith.constant(i8, 1))
                acc = arith.ori(acc, arith.shli(flag, arith.constant(i8, bit)))
            memref.store(acc, out.buf, [arith.addi(row, kb.idx(byte))])
    return out


def unpack(lc: LowerContext, mask: TileBuf, cols: int, width: int, r: ir.Value, c: ir.Value) -> ir.Value:
    """The i1 lanes [c, c + width) of row r of packed `mask` (lanes past `cols` false): bit
    c % w of the mask's element c // w, w its width (8 for UINT8, ...)."""
    kb = lc.kb
    bits = mask.dtype.bits
    i32 = ir.IntegerType.get_signless(32)
    lanes = lane_indices(width, c, i32)
    inside = arith.cmpi(arith.CmpIPredicate.slt, lanes, splat(lanes.type, cols))
    row = vector.broadcast(lanes.type, arith.index_cast(i32, arith.muli(r, kb.idx(mask.pitch))))
    offsets = arith.addi(row, arith.shrui(lanes, splat(lanes.type, bits.bit_length() - 1)))
    words = vector.gather(vtype(width, mask.dtype), mask.buf, [kb.idx(0)], offsets, inside,
                          splat(vtype(width, mask.dtype), 0))
    shift = arith.andi(lanes, splat(lanes.type, bits - 1))
    if bits < 32:
        shift = arith.trunci(ir.VectorType.get([width], ir.IntegerType.get_signless(bits)), shift)
    bit = arith.andi(arith.shrui(words, shift), splat(words.type, 1))
    return arith.cmpi(arith.CmpIPredicate.ne, bit, splat(words.type, 0))
