"""Every ISA-specific choice of kernel codegen, in one place.

Lowerings never look at the host: they build generic MLIR (arith / math / vector) through the
helpers here, which ask the kernel target being compiled for (`plang.target.Isa`, set by
`compile_kernel` with `using`) which instructions exist:

* `fma`: hardware fused multiply-add, else exact emulation in f64 (never a libm call);
  `multiply_add`: fused where possible, else multiply and add (matmul).
* `floor` / `round_integral`: vector rounding instructions (SSE4.1, NEON), else the
  add-and-subtract-2**p trick (exact, any ISA).
* `extf` / `truncf`: FP16 / BF16 conversions in hardware where the target has them (F16C,
  AVX512-BF16, NEON), else inline integer round-to-nearest-even: no compiler-rt helper
  (`__truncsfbf2`, `__extendhfsf2`, ...) is ever called.
* `scale_by_pow2`: `vscalefps` on AVX-512, else two exact multiplies by powers of two.
* `store_fence`: what orders non-temporal stores before a kernel returns.
* `chunk_bytes`, `matmul_block`, `bf16_dot`: vector chunk size, register blocking and the
  BF16 pair dot product.

One lowering is ISA-specific by nature and lives on its own: the BF16 matmul on AMX tile
registers (`lower_matmul_amx`, taken where `Isa.amx_bf16`; the vector micro-kernel is the
generic path everywhere else).

An aarch64 port needs: `Isa` facts for its features (done: NEON, fp16, bf16), a
`store_fence` (a `fence seq_cst` is used off x86), and optionally BFDOT/BFMMLA for `bf16_dot`
(SME tiles would be AMX's counterpart); everything else here is generic MLIR.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

from ...target import Isa
from .mlir import arith, ir, llvm, math, scf, vector, x86

_CURRENT: contextvars.ContextVar[Isa | None] = contextvars.ContextVar("plang_kernel_isa", default=None)


@contextlib.contextmanager
def using(isa: Isa) -> Iterator[Isa]:
    """Make `isa` the target of the kernel being built in this thread / context."""
    token = _CURRENT.set(isa)
    try:
        yield isa
    finally:
        _CURRENT.reset(token)


def current() -> Isa:
    """The target of the kernel being built (the default target outside `using`)."""
    isa = _CURRENT.get()
    return isa if isa is not None else Isa.default()


# -- types ------------------------------------------------------------------------------
def _elem(t: ir.Type) -> ir.Type:
    return t.element_type if isinstance(t, ir.VectorType) else t


def _like(t: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.VectorType.get(t.shape, elem) if isinstance(t, ir.VectorType) else elem


def _i(bits: int) -> ir.Type:
    return ir.IntegerType.get_signless(bits)


def splat(t: ir.Type, value) -> ir.Value:
    """A constant of type `t` (scalar or vector) with every element `value`."""
    elem = _elem(t)
    attr = ir.IntegerAttr.get(elem, int(value)) if isinstance(elem, ir.IntegerType) \
        else ir.FloatAttr.get(elem, float(value))
    if isinstance(t, ir.VectorType):
        return arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr))
    return arith.constant(t, attr)


# -- arithmetic -------------------------------------------------------------------------
def fma(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """a * b + c rounded once. Without FMA instructions, f32 computes in f64 (the product
    is exact there); f64 uses mul + add (plang only calls it with exact products)."""
    if current().fma:
        return math.fma(a, b, c)
    t = a.type
    if isinstance(_elem(t), ir.F64Type):
        return arith.addf(arith.mulf(a, b), c)
    wide = _like(t, ir.F64Type.get())
    a, b, c = (arith.extf(wide, v) for v in (a, b, c))
    return arith.truncf(t, arith.addf(arith.mulf(a, b), c))


def multiply_add(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """a * b + c, fused where the target has FMA, else a multiply and an add (for sums of
    products such as matmul, where either rounding is acceptable)."""
    if current().fma:
        return math.fma(a, b, c)
    return arith.addf(arith.mulf(a, b), c)


def floor(x: ir.Value) -> ir.Value:
    return round_integral(x, "floor")


def round_integral(x: ir.Value, mode: str) -> ir.Value:
    """x rounded to an integral value: `floor`, `ceil`, `trunc`, `even` (half to even) or
    `away` (half away from zero). NaN, infinities and -0 are kept."""
    if current().round_instructions:
        return {"floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "even": math.roundeven,
                "away": math.round}[mode](x)
    t = x.type
    big = splat(t, 2.0 ** (52 if isinstance(_elem(t), ir.F64Type) else 23))
    a = math.absf(x)
    even = arith.subf(arith.addf(a, big), big)  # |x| rounded half to even (|x| < 2**p)
    one = splat(t, 1.0)
    trunc = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, even, a), arith.subf(even, one), even)
    if mode == "even":
        r = even
    elif mode == "away":
        half_up = arith.cmpf(arith.CmpFPredicate.OGE, arith.subf(a, trunc), splat(t, 0.5))
        r = arith.select(half_up, arith.addf(trunc, one), trunc)
    else:
        r = trunc
    r = math.copysign(r, x)
    if mode == "floor":
        r = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, r, x), arith.subf(r, one), r)
    elif mode == "ceil":
        r = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, r, x), arith.addf(r, one), r)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, big), r, x)


# Adding POW2_MAGIC to a float x with |x| < 2**22 rounds x to the nearest integer n; for
# n in [-254, 257] the sum's low 9 mantissa bits hold n + 254, from which `scale_by_pow2`
# shifts its powers of two.
POW2_MAGIC = 1.5 * 2.0 ** 23 + 254


def scale_by_pow2(y: ir.Value, n_magic: ir.Value) -> ir.Value:
    """y * 2**n for `n_magic` = n + POW2_MAGIC, n integral in [-150, 128]: one `vscalefps` per
    512-bit register on AVX-512, else two multiplies by 2**floor(n / 2) and 2**ceil(n / 2),
    normal powers of two (the second multiply rounds once, so denormal results are correctly
    rounded too). Four integer ops build both from the bits of `n_magic`."""
    t = y.type
    if current().scalef and isinstance(t, ir.VectorType) and t.shape[0] % 16 == 0:
        return _scalef(y, arith.subf(n_magic, splat(t, POW2_MAGIC)))
    it = _like(t, _i(32))
    bits = arith.bitcast(it, n_magic)  # 0x4B400000 + n + 254: even high part, so
    half = arith.shrsi(bits, splat(it, 1))  # ... its low 9 bits are 127 + floor(n / 2)
    rest = arith.subi(bits, half)  # ... and these 127 + ceil(n / 2)
    exponent = splat(it, 23)
    s1 = arith.bitcast(t, arith.shli(half, exponent))
    s2 = arith.bitcast(t, arith.shli(rest, exponent))
    return arith.mulf(arith.mulf(y, s1), s2)


def _scalef(y: ir.Value, n: ir.Value) -> ir.Value:
    part = ir.VectorType.get([16], y.type.element_type)
    all_lanes = arith.constant(_i(16), -1)
    current_rounding = arith.constant(_i(32), 4)
    out = y
    for i in range(0, y.type.shape[0], 16):
        yi, ni = (vector.extract_strided_slice(part, v, [i], [16], [1]) for v in (y, n))
        # The x86 dialect hands (src, a, b, k, rounding) to the intrinsic in its order
        # (a, b, passthrough, k, rounding): this is scalef(yi, ni); the mask is all ones.
        scaled = x86.avx512_mask_scalef(yi, ni, yi, all_lanes, current_rounding)
        out = vector.insert_strided_slice(scaled, out, [i], [1])
    return out


# -- float conversions ------------------------------------------------------------------
def extf(t: ir.Type, v: ir.Value) -> ir.Value:
    """Widen `v` to float type `t` (scalar or vector); exact."""
    src, dst = _elem(v.type), _elem(t)
    if isinstance(src, ir.BF16Type):
        i32 = _like(v.type, _i(32))
        bits = arith.extui(i32, arith.bitcast(_like(v.type, _i(16)), v))
        f = arith.bitcast(_like(v.type, ir.F32Type.get()), arith.shli(bits, splat(i32, 16)))
        return f if isinstance(dst, ir.F32Type) else arith.extf(t, f)
    if isinstance(src, ir.F16Type) and not current().f16_conversions:
        f = _f16_to_f32(v)
        return f if isinstance(dst, ir.F32Type) else arith.extf(t, f)
    return arith.extf(t, v)


def truncf(t: ir.Type, v: ir.Value) -> ir.Value:
    """Narrow `v` to float type `t`, rounding to nearest even (NaN stays NaN)."""
    src, dst = _elem(v.type), _elem(t)
    if isinstance(dst, (ir.F16Type, ir.BF16Type)) and isinstance(src, ir.F64Type):
        v = _f64_to_f32_odd(v)  # round to odd first: then one RNE step is exact RNE
    if isinstance(dst, ir.BF16Type) and not current().bf16_conversions:
        if current().bf16_rounding_daz and isinstance(v.type, ir.VectorType):
            return _f32_to_bf16_unless_denormal(v, t)
        return _f32_to_bf16(v, t)
    if isinstance(dst, ir.F16Type) and not current().f16_conversions:
        return _f32_to_f16(v, t)
    return arith.truncf(t, v)


def _f64_to_f32_odd(x: ir.Value) -> ir.Value:
    """x rounded to f32 toward zero, with the last bit set when inexact (round to odd)."""
    f32 = _like(x.type, ir.F32Type.get())
    i32 = _like(x.type, _i(32))
    r = arith.truncf(f32, x)
    back = arith.extf(x.type, r)
    inexact = arith.cmpf(arith.CmpFPredicate.ONE, back, x)
    over = arith.andi(inexact, arith.cmpf(arith.CmpFPredicate.OGT, math.absf(back), math.absf(x)))
    bits = arith.bitcast(i32, r)
    bits = arith.select(over, arith.subi(bits, splat(i32, 1)), bits)  # toward zero
    bits = arith.select(inexact, arith.ori(bits, splat(i32, 1)), bits)
    return arith.bitcast(f32, bits)


def _f32_to_bf16(x: ir.Value, t: ir.Type) -> ir.Value:
    i32 = _like(x.type, _i(32))
    bits = arith.bitcast(i32, x)
    lsb = arith.andi(arith.shrui(bits, splat(i32, 16)), splat(i32, 1))
    rounded = arith.shrui(arith.addi(bits, arith.addi(lsb, splat(i32, 0x7FFF))), splat(i32, 16))
    quiet = arith.ori(arith.shrui(bits, splat(i32, 16)), splat(i32, 0x40))
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    h = arith.trunci(_like(x.type, _i(16)), arith.select(is_nan, quiet, rounded))
    return arith.bitcast(t, h)


def _f32_to_bf16_unless_denormal(x: ir.Value, t: ir.Type) -> ir.Value:
    """AVX512-BF16's `vcvtneps2bf16` (round to nearest even, NaN quieted), which reads denormal
    inputs as zero: a vector holding one takes the integer rounding instead."""
    i32 = _like(x.type, _i(32))
    mag = arith.andi(arith.bitcast(i32, x), splat(i32, 0x7FFFFFFF))
    denormal = arith.cmpi(arith.CmpIPredicate.ult, arith.subi(mag, splat(i32, 1)), splat(i32, 0x007FFFFF))
    i1 = ir.IntegerType.get_signless(1)
    any_denormal = vector.reduction(i1, vector.CombiningKind.OR, denormal)
    joined = branch_type(t)
    branch = scf.IfOp(any_denormal, [joined], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.yield_([to_branch(joined, _f32_to_bf16(x, t))])
    with ir.InsertionPoint(branch.else_block):
        scf.yield_([to_branch(joined, arith.truncf(t, x))])
    return to_branch(t, branch.results[0])


def _f32_to_f16(x: ir.Value, t: ir.Type) -> ir.Value:
    i32 = _like(x.type, _i(32))
    bits = arith.bitcast(i32, x)
    sign = arith.andi(arith.shrui(bits, splat(i32, 16)), splat(i32, 0x8000))
    a = arith.andi(bits, splat(i32, 0x7FFFFFFF))
    # normal results: rebias the exponent, round the 13 dropped bits to nearest even
    odd = arith.andi(arith.shrui(a, splat(i32, 13)), splat(i32, 1))
    normal = arith.shrui(arith.addi(a, arith.addi(odd, splat(i32, ((15 - 127) << 23) + 0xFFF))),
                         splat(i32, 13))
    # subnormal results: adding 0.5 lets the FPU round the bits into place
    f32 = _like(x.type, ir.F32Type.get())
    sub = arith.subi(arith.bitcast(i32, arith.addf(arith.bitcast(f32, a), splat(f32, 0.5))),
                     splat(i32, 0x3F000000))
    nan_inf = arith.select(arith.cmpi(arith.CmpIPredicate.ugt, a, splat(i32, 0x7F800000)),
                           splat(i32, 0x7E00), splat(i32, 0x7C00))
    h = arith.select(arith.cmpi(arith.CmpIPredicate.ult, a, splat(i32, 0x38800000)), sub, normal)
    h = arith.select(arith.cmpi(arith.CmpIPredicate.uge, a, splat(i32, 0x47800000)), nan_inf, h)
    return arith.bitcast(t, arith.trunci(_like(x.type, _i(16)), arith.ori(h, sign)))


def _f16_to_f32(v: ir.Value) -> ir.Value:
    i32 = _like(v.type, _i(32))
    f32 = _like(v.type, ir.F32Type.get())
    h = arith.extui(i32, arith.bitcast(_like(v.type, _i(16)), v))
    o = arith.shli(arith.andi(h, splat(i32, 0x7FFF)), splat(i32, 13))
    exp = arith.andi(o, splat(i32, 0x0F800000))
    o = arith.addi(o, splat(i32, (127 - 15) << 23))
    nan_inf = arith.addi(o, splat(i32, (128 - 16) << 23))
    # subnormal inputs: bump the exponent, then let the FPU renormalize
    sub = arith.bitcast(i32, arith.subf(arith.bitcast(f32, arith.addi(o, splat(i32, 1 << 23))),
                                        splat(f32, 2.0 ** -14)))
    o = arith.select(arith.cmpi(arith.CmpIPredicate.eq, exp, splat(i32, 0x0F800000)), nan_inf, o)
    o = arith.select(arith.cmpi(arith.CmpIPredicate.eq, exp, splat(i32, 0)), sub, o)
    sign = arith.shli(arith.andi(h, splat(i32, 0x8000)), splat(i32, 16))
    return arith.bitcast(f32, arith.ori(o, sign))


def branch_type(t: ir.Type) -> ir.Type:
    """The type a value of type `t` takes through `scf.if` / loop joins: BF16 travels as i16
    where the target has no BF16 arithmetic (LLVM would convert a BF16 phi through f32)."""
    if isinstance(_elem(t), ir.BF16Type) and not current().bf16_conversions:
        return _like(t, _i(16))
    return t


def to_branch(t: ir.Type, v: ir.Value) -> ir.Value:
    """`v` reinterpreted as type `t` (a no-op when it already has it)."""
    return v if v.type == t else arith.bitcast(t, v)


# -- memory and blocking ----------------------------------------------------------------
def store_fence() -> None:
    """Order a kernel's non-temporal stores before it returns."""
    if current().arch == "x86_64":
        llvm.call_intrinsic(None, "llvm.x86.sse.sfence", [], [], [])
    else:
        llvm.fence(llvm.AtomicOrdering.seq_cst)


def chunk_bytes() -> int:
    """Bytes of one logical vector chunk in elementwise loops: four vector registers with 32
    of them, two with 16 (but at least 64 bytes: matmul needs 16-lane chunks). Fewer registers
    per value keep exp's and softmax's temporaries out of the stack: x86-64-v3 softmax
    4096x1024, best of 15: 11.3 GB/s with four ymm per chunk, 15.2 with two (exp 24 vs 23)."""
    isa = current()
    return max(64, (4 if isa.vector_registers >= 32 else 2) * isa.vector_bits // 8)


def matmul_block() -> tuple[int, int]:
    """(MR rows, NR f32 columns) of the matmul register block: MR * NR / lanes accumulators
    plus the B row and a broadcast A element fit the register file (6x64 on AVX-512's 32
    zmm, 6x16 on AVX2's 16 ymm, 3x16 with 16 xmm)."""
    isa = current()
    lanes = isa.vector_bits // 32
    if isa.vector_registers >= 32 and lanes >= 16:
        return 6, 64
    if lanes >= 8:
        return 6, 16
    return 3, 16


def bf16_dot(acc: ir.Value, a_pairs: ir.Value, b_pairs: ir.Value) -> ir.Value:
    """acc += pairwise dot of BF16 pairs (`vdpbf16ps`); only where `current().bf16_dot`."""
    return x86.avx512_dot(acc, a_pairs, b_pairs)
