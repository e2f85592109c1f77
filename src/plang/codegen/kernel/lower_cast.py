"""`tile.cast`: conversions between every supported dtype with the language's rounding and
saturation rules (the torch reference `torch_ref_lib.cast` states the same rules).

* → BOOL: x != 0.
* float → int: round by `mode` (round = half away from zero; rint / none / odd = half to
  even; floor / ceil / trunc), then saturation "on" (the default) clamps to the target range
  with NaN → 0; "off" maps NaN / ±inf to 0 and wraps modulo 2^bits.
* int → int: "on" (default) clamps, "off" wraps.
* → float: round to nearest even for none / rint / round; floor / ceil / trunc / odd adjust
  the nearest result by one ulp where it went the wrong way. Saturation "on" turns an
  overflow of a finite value into the largest finite value; "off" (default) keeps inf.
"""

from __future__ import annotations

from ...dtypes import BOOL, INT64, DataType
from . import isa
from .builder import TileBuf, mlir_type
from .context import LowerContext, unsupported
from .mlir import arith, ir, math
from .vector_math import compare, splat
from .vectors import full

_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
_MAX_FINITE = {"FP32": 3.4028234663852886e38, "FP16": 65504.0, "BF16": 3.3895313892515355e38}


def _vt(v: ir.Value, elem: ir.Type) -> ir.VectorType:
    return ir.VectorType.get(v.type.shape, elem)


def _name(v, names) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else names[int(v)]


def _int_range(d: DataType) -> tuple[int, int]:
    if d is BOOL:
        return 0, 1
    if d.signed:
        return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1
    return 0, (1 << d.bits) - 1


def _to_i64(v: ir.Value, src: DataType) -> ir.Value:
    t = _vt(v, ir.IntegerType.get_signless(64))
    if src.bits == 64:
        return v
    return arith.extsi(t, v) if src.signed and src is not BOOL else arith.extui(t, v)


def _from_i64(v: ir.Value, dst: DataType) -> ir.Value:
    return v if dst.bits == 64 else arith.trunci(_vt(v, mlir_type(dst)), v)


def _float_to_int(x: ir.Value, dst: DataType, mode: str, saturate: bool) -> ir.Value:
    f64 = ir.F64Type.get()
    x = isa.extf(_vt(x, f64), x) if x.type.element_type != f64 else x
    r = isa.round_integral(x, {"round": "away", "floor": "floor", "ceil": "ceil", "trunc": "trunc"}
                           .get(mode, "even"))
    i64 = _vt(r, ir.IntegerType.get_signless(64))
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, r, r)
    zero = splat(r.type, 0.0)
    if saturate:
        lo, hi = _int_range(dst)
        hi = min(hi, (1 << 63) - 1024)
        r = arith.minimumf(arith.maximumf(r, splat(r.type, float(lo))), splat(r.type, float(hi)))
        r = arith.select(is_nan, zero, r)
        return _from_i64(arith.fptosi(i64, r), dst)
    finite = arith.cmpf(arith.CmpFPredicate.ONE, math.absf(r), splat(r.type, float("inf")))
    r = arith.select(finite, r, zero)
    r = arith.minimumf(arith.maximumf(r, splat(r.type, -2.0 ** 63)), splat(r.type, 2.0 ** 63 - 1024))
    return _from_i64(arith.fptosi(i64, r), dst)


def _int_to_int(x: ir.Value, src: DataType, dst: DataType, saturate: bool) -> ir.Value:
    w = _to_i64(x, src)
    if saturate:
        lo, hi = _int_range(dst)
        w = arith.minsi(arith.maxsi(w, splat(w.type, lo)), splat(w.type, hi))
    return _from_i64(w, dst)


def _step(r: ir.Value, away: ir.Value, cond: ir.Value) -> ir.Value:
    """Move r one ulp away from zero (away) or toward zero (~away) where cond holds."""
    it = _vt(r, ir.IntegerType.get_signless(r.type.element_type.width))
    bits = arith.bitcast(it, r)
    moved = arith.select(away, arith.addi(bits, splat(it, 1)), arith.subi(bits, splat(it, 1)))
    return arith.select(cond, arith.bitcast(r.type, moved), r)


def _narrow_float(x: ir.Value, dst: DataType, mode: str) -> ir.Value:
    """x (f32 or f64) narrowed to float `dst` with a directed rounding mode."""
    t = _vt(x, mlir_type(dst))
    r = isa.truncf(t, x) if x.type.element_type.width > t.element_type.width else x
    if mode in ("none", "rint", "round") or r is x:
        return r
    back = isa.extf(x.type, r)
    inf = splat(x.type, float("inf"))
    finite = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(x), inf)
    pos = arith.cmpf(arith.CmpFPredicate.OGT, x, splat(x.type, 0.0))
    false = splat(_vt(x, ir.IntegerType.get_signless(1)), 0)
    if mode in ("floor", "ceil"):
        wrong = arith.cmpf(arith.CmpFPredicate.OGT if mode == "floor" else arith.CmpFPredicate.OLT, back, x)
        away = arith.xori(pos, splat(pos.type, 1)) if mode == "floor" else pos
    else:
        wrong = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(back), math.absf(x))
        away = false
    fix = arith.andi(finite, wrong)
    is_zero = arith.cmpf(arith.CmpFPredicate.OEQ, back, splat(x.type, 0.0))
    tiny = _smallest(r, pos)
    out = _step(r, away, arith.andi(fix, arith.xori(is_zero, splat(is_zero.type, 1))))
    out = arith.select(arith.andi(fix, is_zero), tiny, out)
    if mode == "odd":
        it = _vt(out, ir.IntegerType.get_signless(out.type.element_type.width))
        inexact = arith.andi(finite, arith.cmpf(arith.CmpFPredicate.UNE, isa.extf(x.type, out), x))
        even = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(arith.bitcast(it, out), splat(it, 1)),
                          splat(it, 0))
        nonzero = arith.cmpf(arith.CmpFPredicate.UNE, out, splat(out.type, 0.0))
        out = _step(out, splat(inexact.type, 1), arith.andi(arith.andi(inexact, even), nonzero))
        out = arith.select(arith.andi(inexact, arith.xori(nonzero, splat(nonzero.type, 1))), tiny, out)
    return out


def _smallest(r: ir.Value, pos: ir.Value) -> ir.Value:
    it = _vt(r, ir.IntegerType.get_signless(r.type.element_type.width))
    one = arith.bitcast(r.type, splat(it, 1))
    return arith.select(pos, one, arith.negf(one))


def _to_float(x: ir.Value, src: DataType, dst: DataType, mode: str, saturate: bool) -> ir.Value:
    f64 = ir.F64Type.get()
    if not src.is_float:
        w = _to_i64(x, src)
        x = (arith.sitofp if src.signed and src is not BOOL else arith.uitofp)(_vt(w, f64), w)
    elif src.bits < dst.bits:
        return isa.extf(_vt(x, mlir_type(dst)), x)
    elif src.bits == dst.bits and src is not dst:  # FP16 <-> BF16 goes through f32 exactly
        x = isa.extf(_vt(x, ir.F32Type.get()), x)
    out = _narrow_float(x, dst, mode)
    if saturate:
        big = splat(out.type, _MAX_FINITE[dst.name])
        inf = splat(out.type, float("inf"))
        src_finite = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(x), splat(x.type, float("inf")))
        over = arith.andi(src_finite, arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(out), inf))
        neg = arith.cmpf(arith.CmpFPredicate.OLT, out, splat(out.type, 0.0))
        out = arith.select(over, arith.select(neg, arith.negf(big), big), out)
    return out


def convert_fn(src: DataType, dst: DataType, mode: str = "round", sat: str | None = None):
    """A function converting one storage-typed vector of `src` to `dst` (the rules above)."""
    if dst is BOOL:
        def fn(v):
            z = splat(v.type, 0.0 if src.is_float else 0)
            i1 = compare(v, z, src, "ne")
            return arith.extui(_vt(i1, ir.IntegerType.get_signless(8)), i1)
    elif dst.is_float:
        def fn(v):
            return _to_float(v, src, dst, mode, sat == "on")
    elif src.is_float:
        def fn(v):
            return _float_to_int(v, dst, mode, sat in (None, "on"))
    else:
        def fn(v):
            return _int_to_int(v, src, dst, sat in (None, "on"))
    return fn


def check_convertible(lc: LowerContext, where: str, *dtypes: DataType) -> None:
    for d in dtypes:
        if d is INT64 or not (d.is_float or d.is_int or d is BOOL):
            raise unsupported(lc.where(where), d)


def lower_cast(lc: LowerContext, short: str, a: dict):
    x = lc.operand(a["input"])
    src, dst = x.dtype, lc.call.type.dtype
    mode = _name(a.get("mode", "round"), _MODES) or "round"
    sat = _name(a.get("saturation_mode"), ("off", "on"))
    check_convertible(lc, "tile.cast", src, dst)
    if src is dst:  # the identity: the input's buffer where it dies here or lies in the destination
        dest = lc.request.dest
        if isinstance(x, TileBuf) and dest is not None and x.buf == dest.buf:
            return x
        same = lc.dies_into(a["input"])
        if same is not None:
            return same
    conv = convert_fn(src, dst, mode, sat)
    return lc.elementwise([full(x)], lambda v: conv(v[0]), convert=False)


def register(table: dict) -> None:
    table["tile.cast"] = lower_cast
