"""Vectorized f32 transcendental functions built from arith ops (no libm call per element).

`exp` and `log` are Cephes-style: range reduction, a short polynomial evaluated with fma,
and exponent-bit arithmetic. Measured bounds (tests/codegen/test_kernel_vector_math.py):
relative error <= 4e-7 for exp on [-87, 88] and for log on normal positive inputs.
Edge behaviour, the same at every ISA level: exp(x) is +inf above 88.72 and NaN for NaN;
its power of two is applied by `isa.scale_by_pow2` (one `vscalefps` on AVX-512, two exact
multiplies elsewhere), so denormal results are rounded correctly, down to 0 below about
-103.97. log(0) = -inf, log(x < 0) = NaN,
log(+inf) = +inf, denormal inputs are treated as the smallest normal. `rsqrt` / `sqrt` use
the vector square-root instruction. `tanh` / `sigmoid` build on exp (measured in
tests/codegen/test_kernel_activation.py: relative error <= 1.5e-7 / 1.9e-7 for normal results)."""

from __future__ import annotations

from ...dtypes import BOOL, DataType
from . import isa
from .builder import compute_dtype
from .isa import splat
from .mlir import arith, ir, math

_EXP_HI = 89.0  # exp overflows to inf from 88.73 on
_EXP_LO = -104.0  # exp rounds to 0 from about -103.97 on
_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375
_LN2_LO = -2.12194440e-4
# exp(r) ~ 1 + r * q(r) on |r| <= ln2 / 2, q of degree 5 (relative-error minimax fit, highest
# coefficient first): 6 fma in Horner form, 2.2e-9 from exp in exact arithmetic.
_EXP_POLY = (1.3859315278055972e-3, 8.37475943021284e-3, 4.166772398670985e-2,
             1.666642102379701e-1, 4.9999995351765536e-1, 1.0000000360611867, 1.0)
_LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
             1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
             3.3333331174e-1)
_SQRT_HALF = 0.707106781186547524
# tanh(x) ~ x + x**3 * p(x**2) on |x| < 0.625 (Cephes tanhf), highest coefficient first
_TANH_POLY = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
              -3.33332819422e-1)


def _int_type_like(x: ir.Value) -> ir.Type:
    t = x.type
    i32 = ir.IntegerType.get_signless(32)
    return ir.VectorType.get(t.shape, i32) if isinstance(t, ir.VectorType) else i32


def _horner(x: ir.Value, coeffs) -> ir.Value:
    t = x.type
    p = splat(t, coeffs[0])
    for c in coeffs[1:]:
        p = isa.fma(p, x, splat(t, c))
    return p


def exp(x: ir.Value) -> ir.Value:
    t = x.type
    # clamp with compare + select (one vmaxps / vminps each; NaN passes through)
    x = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, splat(t, _EXP_LO)), splat(t, _EXP_LO), x)
    x = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, splat(t, _EXP_HI)), splat(t, _EXP_HI), x)
    n_magic = isa.fma(x, splat(t, _LOG2E), splat(t, isa.POW2_MAGIC))  # x / ln2 to nearest
    n = arith.subf(n_magic, splat(t, isa.POW2_MAGIC))
    r = isa.fma(n, splat(t, -_LN2_HI), x)
    r = isa.fma(n, splat(t, -_LN2_LO), r)
    return isa.scale_by_pow2(_horner(r, _EXP_POLY), n_magic)


def log(x: ir.Value) -> ir.Value:
    t = x.type
    it = _int_type_like(x)
    bits = arith.bitcast(it, arith.maximumf(x, splat(t, 1.17549435e-38)))
    e = arith.subi(arith.shrui(bits, splat(it, 23)), splat(it, 126))
    m = arith.bitcast(t, arith.ori(arith.andi(bits, splat(it, 0x007FFFFF)), splat(it, 0x3F000000)))
    small = arith.cmpf(arith.CmpFPredicate.OLT, m, splat(t, _SQRT_HALF))
    ef = arith.sitofp(t, e)
    ef = arith.select(small, arith.subf(ef, splat(t, 1.0)), ef)
    one = splat(t, 1.0)
    r = arith.select(small, arith.subf(arith.addf(m, m), one), arith.subf(m, one))
    z = arith.mulf(r, r)
    y = arith.mulf(arith.mulf(_horner(r, _LOG_POLY), r), z)
    y = isa.fma(ef, splat(t, _LN2_LO), y)
    y = isa.fma(z, splat(t, -0.5), y)
    res = isa.fma(ef, splat(t, _LN2_HI), arith.addf(r, y))
    zero = splat(t, 0.0)
    res = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, zero), splat(t, float("-inf")), res)
    res = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, splat(t, float("inf"))), x, res)
    # x < 0 or NaN -> NaN
    return arith.select(arith.cmpf(arith.CmpFPredicate.OGE, x, zero), res, splat(t, float("nan")))


def tanh(x: ir.Value) -> ir.Value:
    """Odd: |x| < 0.625 takes x + x**3 * p(x**2) (Cephes minimax); above, 1 - 2 / (exp(2|x|) + 1),
    which is >= 0.55 there so exp's error is not amplified, and reaches exactly 1 once exp
    overflows. The sign is copied back from x (tanh(-0) = -0, NaN stays NaN)."""
    t = x.type
    a = math.absf(x)
    z = arith.mulf(a, a)
    small = isa.fma(arith.mulf(_horner(z, _TANH_POLY), z), a, a)
    one = splat(t, 1.0)
    large = arith.subf(one, arith.divf(splat(t, 2.0), arith.addf(exp(arith.addf(a, a)), one)))
    res = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, splat(t, 0.625)), small, large)
    return math.copysign(res, x)


def sigmoid(x: ir.Value) -> ir.Value:
    """1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|) <= 1: never overflows,
    and tiny results for very negative x keep exp's relative accuracy."""
    t = x.type
    e = exp(arith.negf(math.absf(x)))
    s = arith.divf(splat(t, 1.0), arith.addf(splat(t, 1.0), e))
    return arith.select(arith.cmpf(arith.CmpFPredicate.UGE, x, splat(t, 0.0)), s, arith.mulf(e, s))


def rsqrt(x: ir.Value) -> ir.Value:
    return arith.divf(splat(x.type, 1.0), math.sqrt(x))


# -- comparisons ----------------------------------------------------------------------------

_CMP_F = {"eq": arith.CmpFPredicate.OEQ, "ne": arith.CmpFPredicate.UNE, "lt": arith.CmpFPredicate.OLT,
          "le": arith.CmpFPredicate.OLE, "gt": arith.CmpFPredicate.OGT, "ge": arith.CmpFPredicate.OGE}
_CMP_S = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMP_U = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}
CMP_NAMES = ("eq", "ne", "lt", "le", "gt", "ge")


def cmp_name(code) -> str:
    if isinstance(code, str):
        return code
    return CMP_NAMES[int(code)]


def compare(a: ir.Value, b: ir.Value, d: DataType, name: str) -> ir.Value:
    """An i1 vector: a <name> b."""
    if compute_dtype(d).is_float:
        return arith.cmpf(_CMP_F[name], a, b)
    pred = (_CMP_S if d.signed and d is not BOOL else _CMP_U)[name]
    return arith.cmpi(getattr(arith.CmpIPredicate, pred), a, b)
