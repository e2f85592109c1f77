"""Elementwise tile ops beyond the basic table: `rem` / `rems` (remainder taking the sign of
the divisor, like torch.remainder), the carry forms `addc` / `subc` / `addsc` / `subsc`
(`(lhs ± rhs) + rhs2`, the first result rounded to the tile dtype like two separate ops) and
`prelu` (per-element slope). Each is one vectorized chunk loop (`LowerContext.elementwise`);
`sin` / `cos` (vector polynomials of `vector_trig`) sit in `lower_elementwise`'s unary table.

Integer remainders by 0 give 0 (torch raises; the value is unspecified here), and a divisor
of -1 never reaches the division (INT_MIN % -1 would trap); its remainder is 0 as it should be.
"""

from __future__ import annotations

from typing import Callable

from ...dtypes import DataType
from .builder import compute_dtype
from .context import LowerContext, unsupported
from .mlir import arith, ir
from .vector_math import compare, splat
from .vectors import full, scalar, to_compute, to_storage


def _remainder(d: DataType) -> Callable[[ir.Value, ir.Value], ir.Value]:
    """a mod b with the sign of b (a nonzero truncated remainder of the other sign gets b added)."""
    if compute_dtype(d).is_float:
        def rem_f(a: ir.Value, b: ir.Value) -> ir.Value:
            r = arith.remf(a, b)
            zero = splat(r.type, 0.0)
            fix = arith.andi(arith.cmpf(arith.CmpFPredicate.UNE, r, zero),
                             arith.xori(arith.cmpf(arith.CmpFPredicate.OLT, r, zero),
                                        arith.cmpf(arith.CmpFPredicate.OLT, b, zero)))
            return arith.select(fix, arith.addf(r, b), r)
        return rem_f
    if not d.signed:
        return lambda a, b: arith.remui(a, _safe_divisor(b, signed=False))

    def rem_s(a: ir.Value, b: ir.Value) -> ir.Value:
        r = arith.remsi(a, _safe_divisor(b, signed=True))
        zero = splat(r.type, 0)
        fix = arith.andi(arith.cmpi(arith.CmpIPredicate.ne, r, zero),
                         arith.cmpi(arith.CmpIPredicate.slt, arith.xori(r, b), zero))
        return arith.select(fix, arith.addi(r, b), r)
    return rem_s


def _safe_divisor(b: ir.Value, signed: bool) -> ir.Value:
    """Divisors 0 (and -1 when signed) become 1: their remainders are 0 without a trap."""
    bad = arith.cmpi(arith.CmpIPredicate.eq, b, splat(b.type, 0))
    if signed:
        bad = arith.ori(bad, arith.cmpi(arith.CmpIPredicate.eq, b, splat(b.type, -1)))
    return arith.select(bad, splat(b.type, 1), b)


def lower_rem(lc: LowerContext, short: str, a: dict) -> object:
    lhs = lc.operand(a["lhs"])
    fn = _remainder(lhs.dtype)
    if short == "rems":
        other = scalar(lc.scalar(a["rhs"], lhs.dtype), lhs.dtype)
    else:
        other = full(lc.operand(a["rhs"]))
    return lc.elementwise([full(lhs), other], lambda v: fn(v[0], v[1]))


def lower_carry(lc: LowerContext, short: str, a: dict) -> object:
    """addc / subc / addsc / subsc: (lhs ± rhs) rounded to the tile dtype, then + rhs2."""
    lhs = lc.operand(a["lhs"])
    d = lhs.dtype
    f = compute_dtype(d).is_float
    add = arith.addf if f else arith.addi
    first = add if short.startswith("add") else (arith.subf if f else arith.subi)
    rhs = scalar(lc.scalar(a["rhs"], d), d) if short.endswith("sc") else full(lc.operand(a["rhs"]))

    def fn(v: list) -> ir.Value:
        return add(to_compute(to_storage(first(v[0], v[1]), d), d), v[2])
    return lc.elementwise([full(lhs), rhs, full(lc.operand(a["rhs2"]))], fn)


def lower_prelu(lc: LowerContext, short: str, a: dict) -> object:
    x = lc.operand(a["tile"])
    if not compute_dtype(x.dtype).is_float:
        raise unsupported(lc.where("tile.prelu"), x.dtype)
    d = x.dtype
    return lc.elementwise([full(x), full(lc.operand(a["slope"]))],
                          lambda v: arith.select(compare(v[0], splat(v[0].type, 0.0), d, "ge"), v[0],
                                                 arith.mulf(v[0], v[1])))


def register(table: dict) -> None:
    table["tile.rem"] = table["tile.rems"] = lower_rem
    for n in ("addc", "subc", "addsc", "subsc"):
        table[f"tile.{n}"] = lower_carry
    table["tile.prelu"] = lower_prelu
