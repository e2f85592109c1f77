"""Scalar expressions (constants, variables, arithmetic, comparisons, casts) → arith ops.

Scalars keep their plang dtype: INDEX → `index`, integers → signless iN, floats → fN,
BOOL → i1 (BOOL kernel parameters arrive as a byte and are narrowed on entry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir as pir
from ...dtypes import BOOL, INDEX, DataType
from . import isa
from .builder import compute_dtype, mlir_type
from .mlir import arith, ir, math, scf
from .vector_math import compare

if TYPE_CHECKING:
    from .context import LowerContext


def scalar_type(dtype: DataType) -> ir.Type:
    return ir.IntegerType.get_signless(1) if dtype is BOOL else mlir_type(dtype)


def convert(v: ir.Value, src: DataType, dst: DataType) -> ir.Value:
    """Convert a scalar of dtype `src` to dtype `dst` (C semantics: truncating float→int)."""
    if src is dst:
        return v
    t = scalar_type(dst)
    if src is BOOL:
        if dst.is_float:
            return arith.uitofp(t, v)
        return arith.index_cast(t, v) if dst is INDEX else arith.extui(t, v)
    if dst is BOOL:
        zero = arith.constant(v.type, 0.0 if src.is_float else 0)
        return (arith.cmpf(arith.CmpFPredicate.UNE, v, zero) if src.is_float
                else arith.cmpi(arith.CmpIPredicate.ne, v, zero))
    if src.is_float and dst.is_float:
        return (isa.extf(t, v) if dst.bits > src.bits else isa.truncf(t, v)) if src.bits != dst.bits \
            else isa.truncf(t, isa.extf(ir.F32Type.get(), v))
    if src.is_float:
        if dst is INDEX:
            return arith.index_cast(t, arith.fptosi(ir.IntegerType.get_signless(64), v))
        if dst.signed or dst.bits >= 64:
            return arith.fptosi(t, v) if dst.signed else arith.fptoui(t, v)
        # narrower unsigned: through int64, wrapping as C and torch do (-3.0 -> 2**32 - 3), where
        # fptoui of a negative value is undefined
        return arith.trunci(t, arith.fptosi(ir.IntegerType.get_signless(64), v))
    if dst.is_float:
        if src is INDEX:
            v = arith.index_cast(ir.IntegerType.get_signless(64), v)
        return arith.sitofp(t, v) if src.signed else arith.uitofp(t, v)
    if src is INDEX or dst is INDEX:
        return arith.index_cast(t, v) if src.signed else arith.index_castui(t, v)
    if dst.bits > src.bits:
        return arith.extsi(t, v) if src.signed else arith.extui(t, v)
    if dst.bits < src.bits:
        return arith.trunci(t, v)
    return v


def to_compute_scalar(v: ir.Value, src: DataType, dtype: DataType) -> ir.Value:
    """A scalar used against a tile of `dtype`, in that tile's compute type."""
    return convert(v, src, compute_dtype(dtype))


def _binop(lc: LowerContext, e: pir.BinaryExpr) -> tuple[ir.Value, DataType]:
    a, da = lower_scalar(lc, e.lhs)
    b, db = lower_scalar(lc, e.rhs)
    name = type(e).__name__
    if name in ("And", "Or"):
        a, b = convert(a, da, BOOL), convert(b, db, BOOL)
        return (arith.andi(a, b) if name == "And" else arith.ori(a, b)), BOOL
    d = e.dtype if e.dtype is not BOOL else _common(da, db)
    a, b = convert(a, da, d), convert(b, db, d)
    if e.is_comparison:
        return compare(a, b, d, {"Eq": "eq", "Ne": "ne", "Lt": "lt", "Le": "le", "Gt": "gt",
                                 "Ge": "ge"}[name]), BOOL
    if d.is_float:
        fn = {"Add": arith.addf, "Sub": arith.subf, "Mul": arith.mulf, "Div": arith.divf,
              "Min": arith.minimumf, "Max": arith.maximumf, "Pow": math.powf,
              "FloorDiv": lambda x, y: isa.floor(arith.divf(x, y)),
              "FloorMod": lambda x, y: arith.subf(x, arith.mulf(isa.floor(arith.divf(x, y)), y))}[name]
        return fn(a, b), d
    s = d.signed
    fn = {"Add": arith.addi, "Sub": arith.subi, "Mul": arith.muli,
          "Div": arith.floordivsi if s else arith.divui,
          "FloorDiv": arith.floordivsi if s else arith.divui,
          "FloorMod": _floormod if s else arith.remui,
          "Min": arith.minsi if s else arith.minui, "Max": arith.maxsi if s else arith.maxui,
          "Pow": _ipow}[name]
    return fn(a, b), d


def _ipow(a: ir.Value, b: ir.Value) -> ir.Value:
    """Integer `a ** b` by repeated multiplication (1 for b <= 0): the LLVM stage has no
    lowering of `math.ipowi`."""
    index = ir.IndexType.get()
    n = b if b.type == index else arith.index_cast(index, b)
    loop = scf.ForOp(arith.constant(index, 0), n, arith.constant(index, 1), [arith.constant(a.type, 1)])
    with ir.InsertionPoint(loop.body):
        scf.yield_([arith.muli(loop.inner_iter_args[0], a)])
    return loop.results[0]


def _floormod(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.subi(a, arith.muli(arith.floordivsi(a, b), b))


def _common(a: DataType, b: DataType) -> DataType:
    if a.is_float or b.is_float:
        return a if a.is_float else b
    if a is INDEX or b is INDEX:
        return INDEX
    return a if a.bits >= b.bits else b


def lower_scalar(lc: LowerContext, e: pir.Expr) -> tuple[ir.Value, DataType]:
    """Evaluate a scalar expression; returns its value and dtype."""
    if isinstance(e, pir.ConstBool):
        return arith.constant(ir.IntegerType.get_signless(1), int(e.value)), BOOL
    if isinstance(e, pir.ConstInt):
        d = e.dtype
        return (lc.kb.idx(e.value) if d is INDEX else lc.kb.const(d, e.value)), d
    if isinstance(e, pir.ConstFloat):
        return lc.kb.const(e.dtype, e.value), e.dtype
    if isinstance(e, pir.Var):
        return lc.lookup_scalar(e)
    if isinstance(e, pir.BinaryExpr):
        return _binop(lc, e)
    if isinstance(e, pir.Neg):
        v, d = lower_scalar(lc, e.operand)
        return (arith.negf(v) if d.is_float else arith.subi(arith.constant(v.type, 0), v)), d
    if isinstance(e, pir.Not):
        v, d = lower_scalar(lc, e.operand)
        v = convert(v, d, BOOL)
        return arith.xori(v, arith.constant(v.type, 1)), BOOL
    if isinstance(e, pir.Cast):
        v, d = lower_scalar(lc, e.operand)
        return convert(v, d, e.dtype), e.dtype
    if isinstance(e, pir.Call):
        return lc.scalar_call(e)
    raise lc.error(f"scalar expression {type(e).__name__} is not supported in kernels")

