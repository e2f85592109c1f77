"""Ops that generate values from their attributes alone: `arange` (an integer sequence) and
`tile.tri` (a triangular 0/1 mask)."""

from __future__ import annotations

from ...dtypes import INT16, INT32, UINT16, UINT32
from ..types import ScalarType, TensorType, TileType, Type, dim_value
from .common import NUMERIC, P, family, fmt_shape, fmt_type, index_values, require_dtype_attr
from .registry import Bound, register


def _int_scalar(b: Bound, name: str) -> None:
    t = b[name].type
    if not (isinstance(t, ScalarType) and t.dtype.is_int):
        raise b.fail(f"operand {name!r} must be an integer scalar, got {fmt_type(t)}")


def _bool_attr(b: Bound, name: str) -> None:
    if not isinstance(b[name], bool):
        raise b.bad_value(f"{name} must be True or False, got {b[name]!r}")


def _arange(tile: bool):
    def deduce(b: Bound) -> Type:
        _int_scalar(b, "start")
        _bool_attr(b, "descending")
        dtype = require_dtype_attr(b, "dtype", (INT16, INT32, UINT16, UINT32))
        shape = index_values(b, "shape")
        if not shape:
            raise b.fail("shape must have at least one dim")
        if any(dim_value(d) != 1 for d in shape[:-1]) or dim_value(shape[-1]) == 1:
            raise b.fail(f"the sequence runs along the last axis: leading dims must be 1 and the last "
                         f"one larger, e.g. [1, N]; got shape {fmt_shape(shape)}")
        return TileType(shape, dtype) if tile else TensorType(shape, dtype)

    return deduce


def _tri(b: Bound) -> Type:
    _int_scalar(b, "diagonal")
    _bool_attr(b, "upper")
    dtype = require_dtype_attr(b, "dtype", NUMERIC)
    shape = index_values(b, "shape")
    if len(shape) != 2 or any(dim_value(d) is None for d in shape):
        raise b.fail(f"shape must be two static dims [rows, cols], got {fmt_shape(shape)}")
    valid = index_values(b, "valid_shape") if b.valid_shape is not None else None
    if valid is not None:
        if len(valid) != 2:
            raise b.fail(f"valid_shape must have 2 dims like shape, got {fmt_shape(valid)}")
        for v, d in zip(valid, shape):
            n = dim_value(v)
            if n is not None and not 0 <= n <= dim_value(d):
                raise b.bad_value(f"valid_shape {fmt_shape(valid)} exceeds shape {fmt_shape(shape)}")
    return TileType(shape, dtype, None, valid)


def _register_all() -> None:
    arange = [P("start", "scalar"), P("shape", "index_list"), P("dtype", "attr", INT32),
              P("descending", "attr", False)]
    doc = ("The integer sequence start, start + 1, ... (start, start - 1, ... when descending) along "
           "the last axis of shape [1, N].")
    family("arange", arange, _arange(False), unit="vector", doc=doc, namespaces=("tensor",))
    family("arange", arange, _arange(True), unit="vector", doc=doc, namespaces=("tile",))
    register("tile.tri", [P("diagonal", "scalar"), P("shape", "index_list"),
                          P("valid_shape", "index_list", None), P("dtype", "attr", INT32),
                          P("upper", "attr", False)], _tri, unit="vector",
             doc="A [rows, cols] mask holding 1 where j <= i + diagonal (upper: j >= i + diagonal) and "
                 "0 elsewhere; only the valid region is written.")


_register_all()
