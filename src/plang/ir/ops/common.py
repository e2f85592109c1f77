"""Deduction helpers shared by the tensor, tile and system op families."""

from __future__ import annotations

from ...dtypes import DataType
from ..expr import Expr, MakeTuple
from ..types import (ShapedType, TensorType, TileType, Type, format_shape, shapes_equal,
                     static_shape)
from .registry import Bound


def same_kind(like: ShapedType, shape, dtype: DataType, valid_shape=None) -> Type:
    """A tensor or tile type (matching `like`) with the given shape and dtype."""
    if isinstance(like, TileType):
        return TileType(shape, dtype, like.memory_space if valid_shape is None else like.memory_space,
                        valid_shape)
    return TensorType(shape, dtype, like.layout if isinstance(like, TensorType) else None)


def elementwise_binary(b: Bound) -> Type:
    """Same shape and dtype on both operands; result keeps them."""
    lhs, rhs = b.lhs.type, b.rhs.type
    if type(lhs) is not type(rhs):
        raise b.fail(f"operands must both be tiles or both tensors, got {kind(lhs)} and {kind(rhs)}")
    if lhs.dtype is not rhs.dtype:
        raise b.fail(f"operand 'rhs' dtype {rhs.dtype.name} does not match 'lhs' dtype {lhs.dtype.name}")
    if not shapes_equal(lhs.shape, rhs.shape):
        raise b.fail(f"operand 'rhs' shape {format_shape(rhs.shape)} does not match "
                     f"'lhs' shape {format_shape(lhs.shape)}")
    return result_like(lhs, lhs.dtype)


def result_like(t: ShapedType, dtype: DataType) -> Type:
    """`t` with a new dtype (tiles keep shape and valid shape, drop memory space)."""
    if isinstance(t, TileType):
        return TileType(t.shape, dtype, None, t.valid_shape)
    return TensorType(t.shape, dtype, t.layout)


def kind(t: Type) -> str:
    return {TensorType: "tensor", TileType: "tile"}.get(type(t), type(t).__name__)


def index_values(b: Bound, name: str) -> tuple[Expr, ...]:
    v = b[name]
    return () if v is None else v.elements if isinstance(v, MakeTuple) else tuple(v)


def require_rank(b: Bound, name: str, t: ShapedType, rank: int) -> None:
    if t.rank != rank:
        raise b.fail(f"operand {name!r} must have rank {rank}, got rank {t.rank} "
                     f"(shape {format_shape(t.shape)})")


def require_dtype(b: Bound, name: str, dtype: DataType, allowed) -> None:
    if dtype not in allowed:
        raise b.fail(f"operand {name!r} dtype {dtype.name} is not supported; expected one of "
                     f"{', '.join(d.name for d in allowed)}")


def static_dims(t: ShapedType) -> tuple[int, ...] | None:
    return static_shape(t.shape)
