"""Elementwise tile ops: binary, scalar forms, unary math, comparisons, select, expands,
row / column broadcast ops. Each is a vectorized row × chunk computation (`LowerContext.elementwise`),
kept lazy when its single use can fuse it (see `lower.py`)."""

from __future__ import annotations

from typing import Callable

from ...dtypes import BOOL, DataType
from ...ir.ops import ops_where
from ...ir.ops.predicate import is_packed
from . import vector_math, vector_trig
from .builder import compute_dtype
from .context import LowerContext, unsupported
from .lower_generate import generated_tile
from .lower_predicate import pack, unpack
from .mlir import arith, ir, math, vector
from .vector_math import cmp_name, compare, splat
from .vectors import full, lazy_map, per_col, per_row, read_chunk, scalar

Vals = list


def _is_float(d: DataType) -> bool:
    return compute_dtype(d).is_float


def _signed(d: DataType) -> bool:
    return d.signed and d is not BOOL


def _guard_divisor(b: ir.Value) -> ir.Value:
    """Integer divisors of 0 become 1 so vector division cannot trap (result unspecified)."""
    zero = splat(b.type, 0)
    return arith.select(arith.cmpi(arith.CmpIPredicate.eq, b, zero), splat(b.type, 1), b)


def _binary_fn(op: str, d: DataType, where: str) -> Callable[[ir.Value, ir.Value], ir.Value]:
    f, s = _is_float(d), _signed(d)
    table: dict[str, Callable] = {}
    if f:
        table = {"add": arith.addf, "sub": arith.subf, "mul": arith.mulf, "div": arith.divf,
                 "maximum": arith.maximumf, "minimum": arith.minimumf, "fmod": arith.remf,
                 "max": arith.maximumf, "min": arith.minimumf,
                 "expdif": lambda a, b: vector_math.exp(arith.subf(a, b))}
    else:
        div = arith.divsi if s else arith.divui
        rem = arith.remsi if s else arith.remui
        table = {"add": arith.addi, "sub": arith.subi, "mul": arith.muli,
                 "div": lambda a, b: div(a, _guard_divisor(b)),
                 "fmod": lambda a, b: rem(a, _guard_divisor(b)),
                 "maximum": arith.maxsi if s else arith.maxui, "minimum": arith.minsi if s else arith.minui,
                 "max": arith.maxsi if s else arith.maxui, "min": arith.minsi if s else arith.minui,
                 "and_": arith.andi, "or_": arith.ori, "xor": arith.xori, "shl": arith.shli,
                 "shr": arith.shrsi if s else arith.shrui}
    fn = table.get(op)
    if fn is None:
        raise unsupported(where, d)
    return fn


def _to_bool(v: ir.Value) -> ir.Value:
    i8 = ir.IntegerType.get_signless(8)
    return arith.extui(ir.VectorType.get(v.type.shape, i8), v)


def _unary_fn(op: str, d: DataType, where: str) -> Callable[[ir.Value], ir.Value]:
    f = _is_float(d)
    if f:
        table = {"exp": vector_math.exp, "log": vector_math.log, "sqrt": math.sqrt,
                 "rsqrt": vector_math.rsqrt, "sin": vector_trig.sin, "cos": vector_trig.cos,
                 "tanh": vector_math.tanh, "sigmoid": vector_math.sigmoid,
                 "recip": lambda x: arith.divf(splat(x.type, 1.0), x), "neg": arith.negf,
                 "abs": math.absf, "relu": lambda x: arith.maximumf(x, splat(x.type, 0.0))}
    else:
        s = _signed(d)
        table = {"neg": lambda x: arith.subi(splat(x.type, 0), x),
                 "abs": math.absi if s else (lambda x: x),
                 "relu": (lambda x: arith.maxsi(x, splat(x.type, 0))) if s else (lambda x: x),
                 "not_": (lambda x: arith.xori(x, splat(x.type, 1))) if d is BOOL
                 else (lambda x: arith.xori(x, splat(x.type, -1)))}
    fn = table.get(op)
    if fn is None:
        raise unsupported(where, d)
    return fn


def lower_binary(lc: LowerContext, short: str, a: dict) -> object:
    lhs, rhs = lc.operand(a["lhs"]), lc.operand(a["rhs"])
    fn = _binary_fn(short, lhs.dtype, lc.where(f"tile.{short}"))
    return lc.elementwise([full(lhs), full(rhs)], lambda v: fn(v[0], v[1]))


def lower_scalar_binary(lc: LowerContext, short: str, a: dict) -> object:
    base = {"and": "and_", "or": "or_"}.get(short[:-1], short[:-1])
    lhs = lc.operand(a["lhs"])
    fn = _binary_fn(base, lhs.dtype, lc.where(f"tile.{short}"))
    s = lc.scalar(a["rhs"], lhs.dtype)
    return lc.elementwise([full(lhs), scalar(s, lhs.dtype)], lambda v: fn(v[0], v[1]))


def lower_unary(lc: LowerContext, short: str, a: dict) -> object:
    x = lc.operand(a.get("input", a.get("tile")))
    fn = _unary_fn(short, x.dtype, lc.where(f"tile.{short}"))
    return lc.elementwise([full(x)], lambda v: fn(v[0]))


class _ChunkMath:
    """`OpFacts.semantics` evaluated on vector chunks of compute dtype (`like`: a chunk)."""

    def __init__(self, dtype: DataType, like: ir.Value, where: str) -> None:
        self.dtype, self.like, self.where = dtype, like, where

    def const(self, v: float) -> ir.Value:
        return splat(self.like.type, float(v))

    def __getattr__(self, name: str) -> Callable[..., ir.Value]:
        if name in BINARY:
            return _binary_fn(name, self.dtype, self.where)
        return _unary_fn(name, self.dtype, self.where)


def lower_composite(lc: LowerContext, short: str, a: dict) -> object:
    """An elementwise op defined by its scalar semantics (`ir/ops/composite.py`)."""
    call = lc.call
    x = lc.operand(a["input"])
    if not _is_float(x.dtype):
        raise unsupported(lc.where(call.op.name), x.dtype)
    semantics, where = call.op.facts.semantics, lc.where(call.op.name)
    return lc.elementwise([full(x)], lambda v: semantics(_ChunkMath(x.dtype, v[0], where), v[0]))


def lower_lrelu(lc: LowerContext, short: str, a: dict) -> object:
    x = lc.operand(a["tile"])
    if not _is_float(x.dtype):
        raise unsupported(lc.where("tile.lrelu"), x.dtype)
    s, d = lc.scalar(a["slope"], x.dtype), x.dtype
    return lc.elementwise([full(x), scalar(s, d)],
                          lambda v: arith.select(compare(v[0], splat(v[0].type, 0.0), d, "gt"), v[0],
                                                 arith.mulf(v[0], v[1])))


def lower_cmp(lc: LowerContext, short: str, a: dict) -> object:
    lhs = lc.operand(a["lhs"])
    name = cmp_name(a.get("cmp_type", 0))
    if short == "cmps":
        other = scalar(lc.scalar(a["rhs"], lhs.dtype), lhs.dtype)
    else:
        other = full(lc.operand(a["rhs"]))
    d = lhs.dtype
    bools = lazy_map(lc.kb, lhs.rows, lhs.cols, BOOL, lhs.valid, [full(lhs), other],
                     lambda v: _to_bool(compare(v[0], v[1], d, name)))
    return pack(lc, bools)


def _mask_i1(m: ir.Value) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.ne, m, splat(m.type, 0))


def lower_sel(lc: LowerContext, short: str, a: dict) -> object:
    dtype = lc.call.type.dtype
    if short == "sel":
        other = full(lc.operand(a["rhs"]))
        src = full(lc.operand(a["lhs"]))
    else:
        src = full(lc.operand(a["src"]))
        other = scalar(lc.scalar(a["scalar"], dtype, storage=True), dtype)
    values = a["lhs" if short == "sel" else "src"].type
    if is_packed(a["mask"].type, values):  # a packed predicate (tile.cmp's, or loaded)
        mask, cols = lc.tile(a["mask"]), lc.dims(values, "")[1]

        def chunk_of(width: int):
            def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
                picked = read_chunk(lc.kb, src.tile, r, c)
                if other.kind == "full":
                    rest = read_chunk(lc.kb, other.tile, r, c)
                else:
                    rest = vector.broadcast(picked.type, other.scalar)
                out = arith.select(unpack(lc, mask, cols, width, r, c), picked, rest)
                return _to_bool(out) if out.type.element_type.width == 1 else out  # BOOL stores a byte
            return chunk
        return generated_tile(lc, chunk_of)
    return lc.elementwise([full(lc.operand(a["mask"])), src, other],
                          lambda v: arith.select(_mask_i1(v[0]), v[1], v[2]), convert=False)


def lower_expands(lc: LowerContext, short: str, a: dict) -> object:
    dtype = lc.call.type.dtype
    s = lc.scalar(a["scalar"], dtype, storage=True)
    return lc.elementwise([scalar(s, dtype)], lambda v: v[0], convert=False)


def lower_expand(lc: LowerContext, short: str, a: dict) -> object:
    """row_expand_<op> / col_expand_<op> / row_expand / col_expand."""
    direction, _, rest = short.partition("_expand")
    op = rest.lstrip("_")
    lhs, rhs = lc.operand(a["lhs"]), lc.tile(a["rhs"])
    bcast = per_row(rhs) if direction == "row" else per_col(rhs)
    if not op:
        return lc.elementwise([full(lhs), bcast], lambda v: v[1], convert=False)
    fn = _binary_fn(op, lhs.dtype, lc.where(f"tile.{short}"))
    if (direction, op) == ("row", "div") and _is_float(lhs.dtype):
        fn = _times_reciprocal
    return lc.elementwise([full(lhs), bcast], lambda v: fn(v[0], v[1]))


def _times_reciprocal(x: ir.Value, d: ir.Value) -> ir.Value:
    """x / d for a row's divisor d as x * (1 / d): the reciprocal is computed once per row
    (hoisted out of the column loop), the rest is a multiply instead of a much slower
    divide. Error <= 1.5 ulp; |d| < 2**-128 (where 1 / d overflows) gives inf or NaN."""
    return arith.mulf(x, arith.divf(splat(d.type, 1.0), d))


BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "fmod", "and_", "or_", "xor", "shl", "shr")
SCALAR_BINARY = ("adds", "subs", "muls", "divs", "maximums", "minimums", "fmods", "ands", "ors",
                 "xors", "shls", "shrs")
UNARY = ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "recip", "neg", "abs", "not_",
         "relu")
EXPAND_OPS = ("add", "sub", "mul", "div", "max", "min", "expdif")


def register(table: dict) -> None:
    for name in ops_where(lambda op: op.facts.semantics is not None, "tile"):
        table[name] = lower_composite
    for n in BINARY:
        table[f"tile.{n}"] = lower_binary
    for n in SCALAR_BINARY:
        table[f"tile.{n}"] = lower_scalar_binary
    for n in UNARY:
        table[f"tile.{n}"] = lower_unary
    table["tile.lrelu"] = lower_lrelu
    table["tile.cmp"] = table["tile.cmps"] = lower_cmp
    table["tile.sel"] = table["tile.sels"] = lower_sel
    table["tile.expands"] = lower_expands
    for direction in ("row", "col"):
        table[f"tile.{direction}_expand"] = lower_expand
        for op in EXPAND_OPS:
            table[f"tile.{direction}_expand_{op}"] = lower_expand
