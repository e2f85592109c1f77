"""Vectorized f32 sine and cosine built from arith ops (no libm call per element).

x = q * pi/2 + r with |r| <= ~pi/4; sin / cos of r are Cephes minimax polynomials (Horner
with fma) and the quadrant q mod 4 picks sin(r), cos(r) and the sign.

Range reduction has two paths, chosen per vector chunk:

* fast (every lane |x| <= 2**17): q = round(x * 2/pi) in f32 and r = x - q * pi/2 with pi/2
  split in three f32 parts (Cody-Waite); the first fma is exact, so r keeps ~2**-72 of pi/2.
* full range (any lane larger, inf or NaN): for the large lanes, y = x * 2/pi mod 4 in f64,
  with 2/pi split into 24-bit parts so each product x * part is exact in f64 and reduced
  mod 4 exactly (a table-free Payne-Hanek); r = (y - round(y)) * pi/2.

Measured bounds (tests/codegen/test_kernel_extra_ops.py): absolute error <= 1.5e-7 over the
whole f32 range, and <= 2 ulp of the result wherever |result| >= 2**-10 (1.6 ulp seen).
sin(+-0) = +-0, sin / cos of +-inf and NaN are NaN.
"""

from __future__ import annotations

from fractions import Fraction

import numpy

from . import isa
from .mlir import arith, ir, math, scf, vector
from .vector_math import splat

FAST_LIMIT = 131072.0
_TWO_OVER_PI = 0.636619772367581343
_SIN_POLY = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_COS_POLY = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
_PI = Fraction(
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534"
    "2117067982148086513282306647093844609550582231725359408128481117450284102701938521105559644622"
    "94895493038196")


def _two_over_pi_parts(count: int = 9, bits: int = 24) -> tuple[float, ...]:
    """2/pi as a sum of `count` doubles of `bits` significant bits each (exact products with
    an f32 mantissa); the terms cover 2/pi down to 2**-(count * bits)."""
    rest, parts = 2 / _PI, []
    for i in range(1, count + 1):
        scale = 2 ** (bits * i)
        part = Fraction(int(rest * scale), scale)
        parts.append(float(part))
        rest -= part
    return tuple(parts)


def _f32_split(value: Fraction, count: int) -> tuple[float, ...]:
    """`value` as a sum of `count` f32 values, each the f32 nearest to what is left."""
    parts = []
    for _ in range(count):
        part = float(numpy.float32(float(value)))
        parts.append(part)
        value -= Fraction(part)
    return tuple(parts)


_TWO_OVER_PI_PARTS = _two_over_pi_parts()
# pi/2 in three f32 parts (Cody-Waite): q * _PIO2[0] is a multiple of 2**-23, so its fma is exact.
_PIO2 = _f32_split(_PI / 2, 3)


def _horner(x: ir.Value, coeffs) -> ir.Value:
    p = splat(x.type, coeffs[0])
    for c in coeffs[1:]:
        p = isa.fma(p, x, splat(x.type, c))
    return p


def _fast_reduce(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    t = x.type
    q = isa.floor(isa.fma(x, splat(t, _TWO_OVER_PI), splat(t, 0.5)))
    r = x
    for part in _PIO2:
        r = isa.fma(q, splat(t, -part), r)
    return q, r


def _mod4(y: ir.Value) -> ir.Value:
    return isa.fma(isa.floor(arith.mulf(y, splat(y.type, 0.25))), splat(y.type, -4.0), y)


def _full_reduce(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    t = x.type
    f64 = ir.VectorType.get(t.shape, ir.F64Type.get())
    xd = arith.extf(f64, x)
    y = splat(f64, 0.0)
    for part in _TWO_OVER_PI_PARTS:  # every term and partial sum stays in [0, 4): exact-ish
        y = _mod4(arith.addf(y, _mod4(arith.mulf(xd, splat(f64, part)))))
    q = isa.floor(arith.addf(y, splat(f64, 0.5)))
    r = arith.mulf(arith.subf(y, q), splat(f64, float(_PI / 2)))
    return arith.truncf(t, q), arith.truncf(t, r)


def _reduce(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(q, r): x = q * pi/2 + r, q an integer-valued float (NaN for inf / NaN inputs)."""
    t = x.type
    big = arith.cmpf(arith.CmpFPredicate.UGT, math.absf(x), splat(t, FAST_LIMIT))
    any_big = vector.reduction(ir.IntegerType.get_signless(1), vector.CombiningKind.OR, big)
    op = scf.IfOp(any_big, [t, t], has_else=True)
    with ir.InsertionPoint(op.then_block):  # lanes within the fast range keep its reduction
        fast, full = _fast_reduce(x), _full_reduce(x)
        scf.yield_([arith.select(big, f, s) for f, s in zip(full, fast)])
    with ir.InsertionPoint(op.else_block):
        scf.yield_(list(_fast_reduce(x)))
    return op.results[0], op.results[1]


def _sin_cos_of_quadrant(q: ir.Value, r: ir.Value, shift: int) -> ir.Value:
    """sin(q * pi/2 + r + shift * pi/2) from the reduced argument."""
    t = r.type
    z = arith.mulf(r, r)
    sin_r = isa.fma(arith.mulf(_horner(z, _SIN_POLY), z), r, r)
    cos_r = isa.fma(arith.mulf(_horner(z, _COS_POLY), z), z, isa.fma(z, splat(t, -0.5), splat(t, 1.0)))
    quadrant = _mod4(arith.addf(q, splat(t, float(shift))))
    odd = arith.ori(arith.cmpf(arith.CmpFPredicate.OEQ, quadrant, splat(t, 1.0)),
                    arith.cmpf(arith.CmpFPredicate.OEQ, quadrant, splat(t, 3.0)))
    v = arith.select(odd, cos_r, sin_r)
    negative = arith.cmpf(arith.CmpFPredicate.OGE, quadrant, splat(t, 2.0))
    return arith.select(negative, arith.negf(v), v)


def sin(x: ir.Value) -> ir.Value:
    q, r = _reduce(x)
    res = _sin_cos_of_quadrant(q, r, 0)
    # sin(+-0) keeps the sign of zero (the reduction turns -0 into +0)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, splat(x.type, 0.0)), x, res)


def cos(x: ir.Value) -> ir.Value:
    q, r = _reduce(x)
    return _sin_cos_of_quadrant(q, r, 1)
