"""Deduction helpers shared by the tensor, tile and system op families.

Messages format shapes and types with the small self-contained formatters below, so type
deduction never depends on the printer.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...dtypes import (
    ALL_DTYPES,
    BF16,
    BOOL,
    FP16,
    FP32,
    INDEX,
    INT8,
    INT16,
    INT32,
    INT64,
    TASK_ID,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    DataType,
)
from ..enums import MemorySpace
from ..expr import BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, Expr, MakeTuple, Var
from ..types import (
    ArrayType,
    AsyncHandleType,
    ScalarType,
    ShapedType,
    TensorType,
    TensorView,
    TileType,
    TupleType,
    Type,
    dim_value,
    dims_equal,
    shapes_equal,
)
from .registry import Bound, Param

P = Param

#: Result type of ops used only for their effect (pipe pushes, syncs): the empty tuple.
VOID = TupleType(())

NUMERIC = tuple(d for d in ALL_DTYPES if (d.is_float or d.is_int) and d not in (INDEX, TASK_ID))
FLOATS = tuple(d for d in NUMERIC if d.is_float)
INTS = tuple(d for d in NUMERIC if d.is_int)
INTS_AND_BOOL = INTS + (BOOL,)
CASTABLE = NUMERIC + (BOOL,)
#: Matmul operand dtype -> accumulator dtype (the cube accumulates wide).
MATMUL_ACC = {FP16: FP32, BF16: FP32, FP32: FP32, INT8: INT32}
#: Dtypes a tile may be stored atomically with `AtomicType.Add`.
ATOMIC_DTYPES = (FP32, BF16, FP16, INT32, INT16, INT8)
CAST_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
SATURATION_MODES = ("off", "on")
CMP_TYPES = ("eq", "ne", "lt", "le", "gt", "ge")
UNSIGNED = (UINT8, UINT16, UINT32, UINT64)
WIDE_INTS = (INT64, UINT64)


# -- formatting ---------------------------------------------------------------------------

def fmt_expr(e: Any) -> str:
    """A compact rendering of a (shape) expression for messages."""
    if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
        return repr(e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, BinaryExpr):
        sym = e.symbol if e.symbol not in ("min", "max") else f" {e.symbol} "
        return f"({fmt_expr(e.lhs)}{sym}{fmt_expr(e.rhs)})"
    if isinstance(e, MakeTuple):
        return "[" + ", ".join(fmt_expr(x) for x in e.elements) + "]"
    if isinstance(e, Call):
        return f"{e.op.name}(...)"
    return type(e).__name__


def fmt_shape(shape: Sequence[Expr]) -> str:
    return "[" + ", ".join(fmt_expr(d) for d in shape) + "]"


def fmt_type(t: Type) -> str:
    """E.g. `Tile[[64, 64], FP32]`, `Tensor[[M, 128], FP16]`, `Scalar[INDEX]`."""
    if isinstance(t, TileType):
        extra = f", valid_shape={fmt_shape(t.valid_shape)}" if t.valid_shape is not None else ""
        return f"Tile[{fmt_shape(t.shape)}, {t.dtype.name}{extra}]"
    if isinstance(t, TensorType):
        return f"Tensor[{fmt_shape(t.shape)}, {t.dtype.name}]"
    if isinstance(t, ScalarType):
        return f"Scalar[{t.dtype.name}]"
    if isinstance(t, TupleType):
        return "Tuple[" + ", ".join(fmt_type(x) for x in t.types) + "]"
    if isinstance(t, ArrayType):
        return f"Array[{t.extent}, {t.dtype.name}]"
    if isinstance(t, AsyncHandleType):
        return t.kind
    return type(t).__name__


def kind(t: Type) -> str:
    return {TensorType: "tensor", TileType: "tile", ScalarType: "scalar"}.get(type(t), type(t).__name__)


# -- building result types ----------------------------------------------------------------

def result_like(t: ShapedType, dtype: DataType | None = None, shape=None, valid_shape=None) -> Type:
    """A value of `t`'s kind with a new dtype and/or shape. Tiles keep their valid shape
    unless `shape` changes (then `valid_shape` applies) and drop the memory space: where a
    computed tile lives is decided by InferTileMemorySpace. A tensor keeps its valid region
    (not its strides) unless `shape` changes."""
    dtype = t.dtype if dtype is None else dtype
    if isinstance(t, TileType):
        if shape is None:
            return TileType(t.shape, dtype, None, t.valid_shape)
        return TileType(shape, dtype, None, valid_shape)
    valid = t.view.valid_shape if shape is None and t.view is not None else None
    return TensorType(t.shape if shape is None else shape, dtype, t.layout,
                      None if valid is None else TensorView(valid_shape=valid))


def valid_of(t: ShapedType) -> tuple[Expr, ...]:
    """The region holding real data (a tensor is valid everywhere)."""
    return t.effective_valid_shape if isinstance(t, TileType) else t.shape


def const_dim(v: int) -> ConstInt:
    return ConstInt(v, INDEX)


def merge_valid(a: ShapedType, b: ShapedType) -> tuple[Expr, ...] | None:
    """Valid shape of an elementwise result: the intersection of both operands' regions
    where it is static, else the first operand's."""
    if not isinstance(a, TileType):
        return None
    va, vb = valid_of(a), valid_of(b)
    out = []
    for x, y in zip(va, vb):
        sx, sy = dim_value(x), dim_value(y)
        out.append(const_dim(min(sx, sy)) if sx is not None and sy is not None else x)
    return tuple(out)


# -- checks ---------------------------------------------------------------------------------

def index_values(b: Bound, name: str) -> tuple[Expr, ...]:
    v = b[name]
    return () if v is None else v.elements if isinstance(v, MakeTuple) else tuple(v)


def static_ints(exprs: Sequence[Expr]) -> tuple[int | None, ...]:
    return tuple(dim_value(e) for e in exprs)


def require_rank(b: Bound, name: str, t: ShapedType, rank: int | None = None, *,
                 min_rank: int | None = None) -> None:
    if rank is not None and t.rank != rank:
        raise b.fail(f"operand {name!r} must have rank {rank}, got rank {t.rank} "
                     f"(shape {fmt_shape(t.shape)})")
    if min_rank is not None and t.rank < min_rank:
        raise b.fail(f"operand {name!r} must have rank >= {min_rank}, got rank {t.rank} "
                     f"(shape {fmt_shape(t.shape)})")


def require_dtype(b: Bound, name: str, dtype: DataType, allowed: Sequence[DataType]) -> None:
    if dtype not in allowed:
        raise b.fail(f"operand {name!r} dtype {dtype.name} is not supported; expected one of "
                     f"{', '.join(d.name for d in allowed)}")


def require_same_dtype(b: Bound, name: str, t: ShapedType, ref_name: str, ref: ShapedType) -> None:
    if t.dtype is not ref.dtype:
        raise b.fail(f"operand {name!r} dtype {t.dtype.name} does not match {ref_name!r} dtype "
                     f"{ref.dtype.name}")


def require_same_shape(b: Bound, name: str, t: ShapedType, ref_name: str, ref: ShapedType) -> None:
    if not shapes_equal(t.shape, ref.shape):
        raise b.fail(f"operand {name!r} shape {fmt_shape(t.shape)} does not match {ref_name!r} "
                     f"shape {fmt_shape(ref.shape)}")


def require_same_kind(b: Bound, name: str, t: Type, ref_name: str, ref: Type) -> None:
    if type(t) is not type(ref):
        raise b.fail(f"operands {ref_name!r} and {name!r} must both be tiles or both tensors, "
                     f"got {kind(ref)} and {kind(t)}")


def require_dim(b: Bound, what: str, actual: Expr, expected: Expr) -> None:
    """`actual` must equal `expected`: both static and equal, or the same dynamic dim.
    A static dim against a dynamic one cannot be decided here and passes."""
    sa, se = dim_value(actual), dim_value(expected)
    if (sa is None) != (se is None):
        return
    if not dims_equal(actual, expected):
        raise b.fail(f"{what}: expected {fmt_expr(expected)}, got {fmt_expr(actual)}")


def require_dtype_attr(b: Bound, name: str, allowed: Sequence[DataType] = CASTABLE) -> DataType:
    d = b[name]
    if not isinstance(d, DataType):
        raise b.fail(f"argument {name!r} must be a dtype such as pl.FP32, got {d!r}")
    if d not in allowed:
        raise b.fail(f"argument {name!r} dtype {d.name} is not supported; expected one of "
                     f"{', '.join(x.name for x in allowed)}")
    return d


def require_memory(b: Bound, name: str, allowed: Sequence[MemorySpace]) -> MemorySpace | None:
    mem = b[name]
    if mem is not None and mem not in allowed:
        raise b.bad_value(f"{name} must be one of {', '.join('MemorySpace.' + m.name for m in allowed)}, "
                          f"got {mem}")
    return mem


def require_int_attr(b: Bound, name: str, lo: int | None = None, hi: int | None = None) -> int:
    v = b[name]
    if isinstance(v, ConstInt):
        v = v.value
    if isinstance(v, bool) or not isinstance(v, int):
        raise b.fail(f"argument {name!r} must be a compile-time integer, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bounds = f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"in [{lo}, {hi}]"
        raise b.bad_value(f"argument {name!r} must be {bounds}, got {v}")
    return v


def require_scalar_matches(b: Bound, name: str, scalar: Expr, target: DataType) -> None:
    """A scalar operand must be numeric, and may not be a float against an integer target."""
    st = scalar.type
    if not isinstance(st, ScalarType) or st.dtype is TASK_ID or not (
            st.dtype.is_float or st.dtype.is_int or st.dtype.is_bool):
        raise b.fail(f"operand {name!r} must be a numeric scalar, got {fmt_type(st)}")
    if st.dtype.is_float and not target.is_float:
        raise b.fail(f"operand {name!r} is a {st.dtype.name} scalar but the {target.name} operand "
                     f"is integer; cast it explicitly")
    if isinstance(scalar, ConstInt) and not target.holds(scalar.value):
        raise b.bad_value(f"operand {name!r} = {scalar.value} is out of the range of {target.name}")


def check_window(b: Bound, what: str, offsets: Sequence[Expr], extents: Sequence[Expr],
                 bound: Sequence[Expr], bound_name: str) -> None:
    """offsets + extents must stay inside `bound` wherever all three are static."""
    for axis, (o, e, n) in enumerate(zip(offsets, extents, bound)):
        so, se, sn = dim_value(o), dim_value(e), dim_value(n)
        if so is not None and so < 0:
            raise b.bad_value(f"{what} offset {so} on axis {axis} is negative")
        if so is not None and se is not None and sn is not None and so + se > sn:
            raise b.bad_value(f"{what} [{so}, {so + se}) on axis {axis} exceeds {bound_name} "
                              f"extent {sn} (offsets {fmt_shape(offsets)}, shape {fmt_shape(extents)}, "
                              f"{bound_name} shape {fmt_shape(bound)})")


def normalize_axis(b: Bound, name: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise b.bad_value(f"{name}={axis} is out of range for rank {rank}")
    return axis % rank


def mode_name(value: Any, names: Sequence[str]) -> str | None:
    """A mode given by name or int code as its name, or None when not one of `names`."""
    if isinstance(value, str) and value in names:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    return None


def is_unsigned(d: DataType) -> bool:
    return d in UNSIGNED


# -- registering one op for both the tensor and the tile family ---------------------------

FAMILIES = ("tensor", "tile")


def family(short: str, params: Sequence[Param], deduce, *, unit: str, doc: str,
           namespaces: Sequence[str] = FAMILIES, extra: dict[str, Sequence[Param]] | None = None,
           **facts: Any) -> None:
    """Register `tensor.<short>` and/or `tile.<short>` with one deduction rule.

    A parameter of kind `"X"` becomes the family's own kind (`tensor` or `tile`); `extra`
    appends namespace-specific parameters (e.g. the tile form's scratch `tmp`).
    """
    from .registry import register

    for ns in namespaces:
        ps = [Param(p.name, ns if p.kind == "X" else p.kind, p.default) for p in params]
        ps += list((extra or {}).get(ns, ()))
        register(f"{ns}.{short}", ps, deduce, unit=unit, doc=doc, **facts)
