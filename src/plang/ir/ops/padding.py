"""Padding ops beyond the tile-only `tile.fillpad` (in layout.py): `tensor.fillpad` (cells
outside a tensor's valid region set to a pad value) and `fillpad_expand` for both families (the
valid region copied into the top-left of a larger value, every other cell padded)."""

from __future__ import annotations

from ..enums import PadValue
from ..types import TensorType, TileType, Type, dim_value
from .common import P, fmt_shape, index_values
from .layout import pad_mode
from .registry import Bound, register


def _fresh(t, shape) -> Type:
    """A fully valid value of `t`'s kind and dtype with `shape` (no inherited view)."""
    if isinstance(t, TileType):
        return TileType(shape, t.dtype, None, None)
    return TensorType(shape, t.dtype, t.layout)


def _fillpad(b: Bound) -> Type:
    pad_mode(b)
    t = b.value.type
    return _fresh(t, t.shape)


def _fillpad_expand(b: Bound) -> Type:
    pad_mode(b)
    t = b.value.type
    shape = index_values(b, "shape")
    if len(shape) != t.rank:
        raise b.fail(f"shape {fmt_shape(shape)} must have the rank of value {fmt_shape(t.shape)}")
    for axis, (new, old) in enumerate(zip(shape, t.shape)):
        sn, so = dim_value(new), dim_value(old)
        if sn is not None and so is not None and sn < so:
            raise b.bad_value(f"shape {fmt_shape(shape)} is smaller than value {fmt_shape(t.shape)} "
                              f"on axis {axis}")
    return _fresh(t, shape)


def _register_all() -> None:
    pad = P("pad_value", "attr", PadValue.zero)
    register("tensor.fillpad", [P("value", "tensor"), pad], _fillpad, unit="vector", fusible=True,
             doc="Fill the cells outside the tensor's valid region with pad_value (default zero); "
                 "the result is fully valid.")
    for ns in ("tensor", "tile"):
        register(f"{ns}.fillpad_expand", [P("value", ns), P("shape", "index_list"), pad], _fillpad_expand,
                 unit="vector",
                 doc="A value of the larger shape holding value's valid region at the top-left and "
                     "pad_value (default zero) everywhere else.")


_register_all()
