"""Vectorized f32 transcendental functions built from arith ops (no libm call per element).

`exp` and `log` are Cephes-style: range reduction, a short polynomial evaluated with fma,
and exponent-bit arithmetic. Measured bounds (tests/codegen/test_kernel_vector_math.py):
relative error <= 4e-7 for exp on [-87, 88] and for log on normal positive inputs.
Edge behaviour: exp(x) is +inf above 88.72 and NaN for NaN. With AVX-512, exp applies its
power of two with ldexp (one `vscalefps`): denormal results are rounded correctly, down to 0
below about -103.3; otherwise (exponent-bit arithmetic) exp(x) is 0 below -88.376, with
denormal results above that. log(0) = -inf, log(x < 0) = NaN,
log(+inf) = +inf, denormal inputs are treated as the smallest normal. `rsqrt` / `sqrt` use
the vector square-root instruction. `tanh` / `sigmoid` build on exp (measured in
tests/codegen/test_kernel_activation.py: relative error <= 1.5e-7 / 1.9e-7 for normal results)."""

from __future__ import annotations

from .host import cpu_flags
from .mlir import arith, ir, llvm, math, vector, x86

_EXP_HI = 88.72283935546875
_EXP_LO = -88.37626266479492
_EXP_LDEXP_HI = 89.0  # exp overflows to inf from 88.73 on
_EXP_LDEXP_LO = -104.0  # exp rounds to 0 from about -103.97 on
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


def splat(t: ir.Type, value) -> ir.Value:
    """A constant of type `t` (scalar or vector) with every element `value`."""
    elem = t.element_type if isinstance(t, ir.VectorType) else t
    if isinstance(elem, ir.IntegerType):
        attr = ir.IntegerAttr.get(elem, int(value))
    else:
        attr = ir.FloatAttr.get(elem, float(value))
    if isinstance(t, ir.VectorType):
        return arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr))
    return arith.constant(t, attr)


def _int_type_like(x: ir.Value) -> ir.Type:
    t = x.type
    i32 = ir.IntegerType.get_signless(32)
    return ir.VectorType.get(t.shape, i32) if isinstance(t, ir.VectorType) else i32


def _horner(x: ir.Value, coeffs) -> ir.Value:
    t = x.type
    p = splat(t, coeffs[0])
    for c in coeffs[1:]:
        p = math.fma(p, x, splat(t, c))
    return p


def exp(x: ir.Value) -> ir.Value:
    t = x.type
    use_ldexp = _ldexp_is_one_instruction(t)
    lo, hi = (_EXP_LDEXP_LO, _EXP_LDEXP_HI) if use_ldexp else (_EXP_LO, _EXP_HI)
    underflow = arith.cmpf(arith.CmpFPredicate.OLT, x, splat(t, lo))
    # clamp with compare + select (one vmaxps / vminps each; NaN passes through)
    x = arith.select(underflow, splat(t, lo), x)
    x = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, splat(t, hi)), splat(t, hi), x)
    fx = math.floor(math.fma(x, splat(t, _LOG2E), splat(t, 0.5)))
    r = math.fma(fx, splat(t, -_LN2_HI), x)
    r = math.fma(fx, splat(t, -_LN2_LO), r)
    y = _horner(r, _EXP_POLY)
    if use_ldexp and isinstance(t, ir.VectorType) and t.shape[0] % 16 == 0:
        return _scalef(y, fx)
    it = _int_type_like(x)
    n = arith.fptosi(it, fx)
    if use_ldexp:
        # LLVM lowers ldexp to `vscalefps` with AVX-512 (after converting n back to float):
        # it rounds denormal results correctly, gives 0 / inf past the range, keeps NaN.
        return llvm.call_intrinsic(t, f"llvm.ldexp.{_llvm_suffix(t)}.{_llvm_suffix(it)}", [y, n], [], [])
    # 2**fx in two halves so fx = 128 (x near the top of the range) does not overflow early.
    half = arith.shrsi(n, splat(it, 1))
    rest = arith.subi(n, half)
    s1 = arith.bitcast(t, arith.shli(arith.addi(half, splat(it, 127)), splat(it, 23)))
    s2 = arith.bitcast(t, arith.shli(arith.addi(rest, splat(it, 127)), splat(it, 23)))
    return arith.select(underflow, splat(t, 0.0), arith.mulf(arith.mulf(y, s1), s2))


def _scalef(y: ir.Value, fx: ir.Value) -> ir.Value:
    """y * 2**fx (fx integral, as f32) with one `vscalefps` per 512-bit register: ldexp
    without the float -> int -> float round trip."""
    part = ir.VectorType.get([16], y.type.element_type)
    all_lanes = arith.constant(ir.IntegerType.get_signless(16), -1)
    current_rounding = arith.constant(ir.IntegerType.get_signless(32), 4)
    out = y
    for i in range(0, y.type.shape[0], 16):
        yi, ni = (vector.extract_strided_slice(part, v, [i], [16], [1]) for v in (y, fx))
        # The x86 dialect hands its operands (src, a, b, k, rounding) to the LLVM intrinsic
        # in the intrinsic's order (a, b, passthrough, k, rounding): this is scalef(yi, ni);
        # the all-ones mask leaves the passthrough unused.
        scaled = x86.avx512_mask_scalef(yi, ni, yi, all_lanes, current_rounding)
        out = vector.insert_strided_slice(scaled, out, [i], [1])
    return out


def _llvm_suffix(t: ir.Type) -> str:
    """The overloaded-intrinsic name part of a type: f32, i32, v64f32, ..."""
    if isinstance(t, ir.VectorType):
        return f"v{t.shape[0]}{_llvm_suffix(t.element_type)}"
    return f"i{t.width}" if isinstance(t, ir.IntegerType) else "f32"


def _ldexp_is_one_instruction(t: ir.Type) -> bool:
    """f32 (vector) ldexp is one `vscalefps` on AVX-512 hosts."""
    elem = t.element_type if isinstance(t, ir.VectorType) else t
    return isinstance(elem, ir.F32Type) and "avx512f" in cpu_flags()


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
    y = math.fma(ef, splat(t, _LN2_LO), y)
    y = math.fma(z, splat(t, -0.5), y)
    res = math.fma(ef, splat(t, _LN2_HI), arith.addf(r, y))
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
    small = math.fma(arith.mulf(_horner(z, _TANH_POLY), z), a, a)
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
