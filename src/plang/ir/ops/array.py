"""On-core scalar arrays (`array.*`): `pl.array.create(16, pl.INT32)`, `arr[i]` and the
functional `arr[i] = v` (a new array value that the parser rebinds to `arr`)."""

from __future__ import annotations

from ...dtypes import BOOL, TASK_ID, DataType
from ..expr import ConstInt
from ..types import ArrayType, ScalarType, Type
from .common import CASTABLE, P, fmt_type, require_dtype_attr, require_int_attr
from .registry import Bound, register

#: Element dtypes of an array: numeric scalars, BOOL and task ids (for deps= lists).
ELEMENT_DTYPES = CASTABLE + (TASK_ID,)


def _create(b: Bound) -> Type:
    extent = require_int_attr(b, "extent", 1)
    return ArrayType(extent, require_dtype_attr(b, "dtype", ELEMENT_DTYPES))


def _check_index(b: Bound, arr: ArrayType) -> None:
    it = b.index.type
    if not (isinstance(it, ScalarType) and it.dtype.is_int and it.dtype is not TASK_ID):
        raise b.fail(f"argument 'index' must be an integer scalar, got {fmt_type(it)}")
    if isinstance(b.index, ConstInt) and not 0 <= b.index.value < arr.extent:
        raise b.bad_value(f"index {b.index.value} is out of range for an array of {arr.extent} elements")


def _get_element(b: Bound) -> Type:
    arr = b.array.type
    _check_index(b, arr)
    return ScalarType(arr.dtype)


def _fits(value: DataType, element: DataType) -> bool:
    if value is element:
        return True
    if TASK_ID in (value, element) or BOOL in (value, element):
        return False
    return element.is_float or not value.is_float  # an int fits anywhere, a float only a float


def _update_element(b: Bound) -> Type:
    arr = b.array.type
    _check_index(b, arr)
    vt = b.value.type
    if not (isinstance(vt, ScalarType) and _fits(vt.dtype, arr.dtype)):
        raise b.fail(f"operand 'value' of type {fmt_type(vt)} cannot be stored in a "
                     f"{arr.dtype.name} array")
    return arr


def _register_all() -> None:
    register("array.create", [P("extent", "attr"), P("dtype", "attr")], _create, unit="alloc",
             doc="A new on-core array of extent scalars of dtype (contents undefined).")
    register("array.get_element", [P("array", "array"), P("index", "scalar")], _get_element,
             unit="scalar", reads=(), doc="Element index of the array (`arr[i]`).")
    register("array.update_element", [P("array", "array"), P("index", "scalar"), P("value", "scalar")],
             _update_element, unit="scalar", reads=(),
             doc="The array with element index replaced by value (`arr[i] = v` rebinds arr).")


_register_all()
