"""Helpers for the op registry tests: typed Vars and a compact rendering of result types."""

from __future__ import annotations

from plang.dtypes import FP32, DataType
from plang.ir import (
    ArrayType,
    AsyncHandleType,
    CommCtxType,
    ConstInt,
    PtrType,
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Var,
)
from plang.ir.ops import make_call


def tensor(shape, dtype: DataType = FP32, name: str = "t") -> Var:
    return Var(name, TensorType(shape, dtype))


def tile(shape, dtype: DataType = FP32, valid=None, mem=None, name: str = "x") -> Var:
    return Var(name, TileType(shape, dtype, mem, valid))


def scalar(dtype: DataType, name: str = "s") -> Var:
    return Var(name, ScalarType(dtype))


def handle(kind: str, name: str = "h") -> Var:
    """A prefetch handle (`PrefetchAsyncContext`, `AsyncEvent` or `AsyncSession`)."""
    return Var(name, AsyncHandleType(kind))


def array(extent: int, dtype: DataType, name: str = "arr") -> Var:
    return Var(name, ArrayType(extent, dtype))


def _dims(shape) -> str:
    return "[" + ", ".join(str(d.value) if isinstance(d, ConstInt) else getattr(d, "name", "?")
                           for d in shape) + "]"


def describe(t) -> str:
    """`Tile[[64, 1], FP32]`, `Tile[[64, 64], FP32, Vec, valid=[32, 64]]`, `Scalar[INDEX]`,
    `Array[16, INT32]`, `()`."""
    if isinstance(t, TileType):
        extra = f", {t.memory_space.name}" if t.memory_space is not None else ""
        extra += f", valid={_dims(t.valid_shape)}" if t.valid_shape is not None else ""
        return f"Tile[{_dims(t.shape)}, {t.dtype.name}{extra}]"
    if isinstance(t, TensorType):
        return f"Tensor[{_dims(t.shape)}, {t.dtype.name}]"
    if isinstance(t, ScalarType):
        return f"Scalar[{t.dtype.name}]"
    if isinstance(t, ArrayType):
        return f"Array[{t.extent}, {t.dtype.name}]"
    if isinstance(t, TupleType) and not t.types:
        return "()"
    if isinstance(t, (PtrType, CommCtxType)):
        return type(t).__name__
    if isinstance(t, AsyncHandleType):
        return t.kind
    raise AssertionError(f"unexpected type {type(t).__name__}")


def deduce(name: str, /, *args, **kwargs) -> str:
    return describe(make_call(name, args, kwargs).type)
