"""`random`: Philox4x32 on i32 lanes (see `ir/ops/rng.py` for the function computed). Each
chunk derives its lanes' positions, adds `position // 4` to the 128-bit counter with carry,
runs the rounds (32 x 32 -> 64-bit products for the multiplies) and keeps lane `position % 4`
of the four outputs. Lazy like any generated tile."""

from __future__ import annotations

from ...dtypes import UINT32
from ...ir.ops.rng import MULTIPLIERS, SEEDS, WEYL
from .context import LowerContext
from .lower_generate import generated_tile, lane_indices
from .lower_scalar import convert, lower_scalar
from .mlir import arith, ir, vector
from .vector_math import splat


def _word(vt: ir.VectorType, v: int) -> ir.Value:
    """A splat of the 32-bit word v (as the signed value of its bits)."""
    return splat(vt, v - (1 << 32) if v >= 1 << 31 else v)


def _mulhilo(m: int, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    wide = ir.VectorType.get(x.type.shape, ir.IntegerType.get_signless(64))
    prod = arith.muli(arith.extui(wide, x), splat(wide, m))
    return arith.trunci(x.type, arith.shrui(prod, splat(wide, 32))), arith.trunci(x.type, prod)


def lower_random(lc: LowerContext, short: str, a: dict) -> object:
    seeds = []
    for name in SEEDS:
        v, d = lower_scalar(lc, a[name])
        seeds.append(convert(v, d, UINT32))
    rounds = a.get("rounds") or 10
    cols = lc.call.type.static_shape[-1]
    i32 = ir.IntegerType.get_signless(32)

    def chunk_of(width: int):
        vt = ir.VectorType.get([width], i32)

        def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
            row = arith.index_cast(i32, arith.muli(r, lc.kb.idx(cols)))
            p = arith.addi(vector.broadcast(vt, row), lane_indices(width, c, i32))
            block, lane = arith.shrui(p, splat(vt, 2)), arith.andi(p, splat(vt, 3))
            k0, k1, *counter = (vector.broadcast(vt, s) for s in seeds)
            x, carry = [], block
            for word in counter:  # counter + block, little-endian words
                total = arith.addi(word, carry)
                x.append(total)
                carry = arith.extui(vt, arith.andi(arith.cmpi(arith.CmpIPredicate.ult, total, word),
                                                   arith.cmpi(arith.CmpIPredicate.ne, carry, splat(vt, 0))))
            for n in range(rounds):
                if n:
                    k0, k1 = arith.addi(k0, _word(vt, WEYL[0])), arith.addi(k1, _word(vt, WEYL[1]))
                hi0, lo0 = _mulhilo(MULTIPLIERS[0], x[0])
                hi1, lo1 = _mulhilo(MULTIPLIERS[1], x[2])
                x = [arith.xori(arith.xori(hi1, x[1]), k0), lo1, arith.xori(arith.xori(hi0, x[3]), k1), lo0]
            out = x[3]
            for q in (2, 1, 0):
                out = arith.select(arith.cmpi(arith.CmpIPredicate.eq, lane, splat(vt, q)), x[q], out)
            return out
        return chunk
    return generated_tile(lc, chunk_of)


def register(table: dict) -> None:
    table["tile.random"] = lower_random
