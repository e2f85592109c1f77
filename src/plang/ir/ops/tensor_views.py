"""Zero-copy reinterpretations of a DDR tensor: `tensor.view` (a new shape and/or layout over
the same memory) and `tensor.set_validshape` (a new valid region). Inside a kernel they become
their tile forms (`tile.reshape`, `tile.set_validshape`)."""

from __future__ import annotations

import math

from ..enums import TensorLayout
from ..types import TensorType, TensorView, Type, dim_value
from .common import P, fmt_shape, index_values, require_rank, static_ints
from .layout import reshaped_valid
from .registry import Bound, register
from .views import valid_extents


def _valid(t: TensorType):
    return t.view.valid_shape if t.view is not None else None


def _with_valid(shape, dtype, layout, valid, pad=None) -> TensorType:
    view = None
    if valid is not None and not all(dim_value(a) is not None and dim_value(a) == dim_value(b)
                                     for a, b in zip(valid, shape)):
        view = TensorView(valid_shape=valid) if pad is None else TensorView(valid_shape=valid, pad=pad)
    return TensorType(shape, dtype, layout, view)


def _view(b: Bound) -> Type:
    t = b.tensor.type
    shape = index_values(b, "shape") if b.shape is not None else None
    layout = b.layout
    if shape is None and layout is None:
        raise b.fail("pass shape= and/or layout=")
    if layout is not None and not isinstance(layout, TensorLayout):
        raise b.fail(f"layout must be a pl.TensorLayout, got {layout!r}")
    if layout is not None and layout is not t.layout and shape is None:
        if layout not in (TensorLayout.ND, TensorLayout.DN):
            raise b.bad_value(f"only ND <-> DN layout views are supported, got {layout.name}")
        require_rank(b, "tensor", t, min_rank=2)
        shape = (*t.shape[:-2], t.shape[-1], t.shape[-2])  # the trailing pair swaps with the layout
    if shape is None:
        shape = t.shape
    if not shape:
        raise b.bad_value("a view needs rank >= 1")
    so, sn = static_ints(t.shape), static_ints(shape)
    if None not in so and None not in sn and math.prod(so) != math.prod(sn):
        raise b.bad_value(f"cannot view {fmt_shape(t.shape)} ({math.prod(so)} elements) as "
                          f"{fmt_shape(shape)} ({math.prod(sn)} elements)")
    if b.valid_shape is not None:
        valid = index_values(b, "valid_shape")
        if len(valid) != len(shape):
            raise b.fail(f"valid_shape {fmt_shape(valid)} must have the rank of shape {fmt_shape(shape)}")
    elif _valid(t) is not None and len(shape) == t.rank and layout in (None, t.layout):
        valid = reshaped_valid(b, t.shape, _valid(t), shape)
    else:
        valid = None
    return _with_valid(shape, t.dtype, layout or t.layout, valid)


def _set_validshape(b: Bound) -> Type:
    t, valid = b.tensor.type, valid_extents(b, "tensor")
    view = TensorView(valid_shape=valid) if t.view is None else t.view.replace(valid_shape=valid)
    return TensorType(t.shape, t.dtype, t.layout, view)


def _register_all() -> None:
    register("tensor.view", [P("tensor", "tensor"), P("shape", "index_list", None),
                             P("valid_shape", "index_list", None), P("layout", "attr", None)],
             _view, unit="memory",
             doc="The tensor's memory read with a new shape (row-major) and/or layout (ND <-> DN "
                 "swaps the trailing pair); no data moves.")
    register("tensor.set_validshape", [P("tensor", "tensor"), P("valid_rows", "scalar"),
                                       P("valid_cols", "scalar")],
             _set_validshape, unit="memory", fusible=True,
             doc="The tensor with its valid region set to [valid_rows, valid_cols]; no data moves.")


_register_all()
