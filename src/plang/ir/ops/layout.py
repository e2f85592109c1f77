"""Shape and window ops for both families: reshape, transpose, slice, assemble, concat,
plus the tile-only fillpad and the tensor-only expand_clone. Static windows are
bounds-checked; tiles carry their valid region through (a reshape that no box of the new
shape can describe is rejected)."""

from __future__ import annotations

import math
from typing import Sequence

from ..enums import AtomicType, PadValue
from ..expr import Add, Expr
from ..types import TensorType, TileType, Type, dim_value
from .common import (
    ATOMIC_DTYPES,
    P,
    check_window,
    const_dim,
    family,
    fmt_shape,
    index_values,
    normalize_axis,
    require_dim,
    require_dtype,
    require_int_attr,
    require_rank,
    require_same_dtype,
    require_same_kind,
    result_like,
    static_ints,
    valid_of,
)
from .registry import Bound, register


def pad_mode(b: Bound, name: str = "pad_value") -> PadValue | None:
    """A pad value given as PadValue.zero/max/min or the sugars 0, math.inf, -math.inf."""
    v = b[name]
    if v is None or isinstance(v, PadValue) and v is not PadValue.null:
        return v
    sugar = {0: PadValue.zero, math.inf: PadValue.max, -math.inf: PadValue.min}
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v in sugar:
        return sugar[v]
    raise b.bad_value(f"{name} must be PadValue.zero / .max / .min or 0 / math.inf / -math.inf, got {v!r}")


def _product(dims: Sequence[int]) -> int:
    return math.prod(dims)


def reshaped_valid(b: Bound, old: Sequence[Expr], valid: Sequence[Expr],
                   new: Sequence[Expr]) -> tuple[Expr, ...]:
    """The valid box of `new` holding exactly the cells `valid` held in `old`."""
    def non_unit(shape):
        return [i for i, d in enumerate(shape) if dim_value(d) != 1]

    keep_old, keep_new = non_unit(old), non_unit(new)
    if len(keep_old) == len(keep_new) and all(
            dim_value(old[i]) == dim_value(new[j]) and (dim_value(old[i]) is not None or old[i] is new[j])
            for i, j in zip(keep_old, keep_new)):
        out = [const_dim(1)] * len(new)
        for i, j in zip(keep_old, keep_new):
            out[j] = valid[i]
        return tuple(out)
    so, sv, sn = static_ints(old), static_ints(valid), static_ints(new)
    if None not in so and None not in sv and None not in sn:
        count = _prefix_count(so, sv)
        if count is not None:
            for axis in range(len(sn) - 1, -1, -1):
                inner = _product(sn[axis + 1:])
                if count % inner == 0 and count // inner <= sn[axis]:
                    return tuple(const_dim(v) for v in [1] * axis + [count // inner] + list(sn[axis + 1:]))
    raise b.bad_value(f"the valid region {fmt_shape(valid)} of shape {fmt_shape(old)} is not a box "
                      f"of the new shape {fmt_shape(new)}")


def _prefix_count(shape: Sequence[int], valid: Sequence[int]) -> int | None:
    """Element count when the valid box is a contiguous prefix of the flat buffer."""
    for axis in range(len(shape)):
        if all(v == 1 for v in valid[:axis]) and list(valid[axis + 1:]) == list(shape[axis + 1:]):
            return valid[axis] * _product(shape[axis + 1:])
    return None


def _reshape(b: Bound) -> Type:
    t = b.input.type
    new = index_values(b, "shape")
    so, sn = static_ints(t.shape), static_ints(new)
    if None not in so and None not in sn and _product(so) != _product(sn):
        raise b.bad_value(f"cannot reshape {fmt_shape(t.shape)} ({_product(so)} elements) to "
                          f"{fmt_shape(new)} ({_product(sn)} elements)")
    valid = None
    if isinstance(t, TileType) and t.valid_shape is not None:
        valid = reshaped_valid(b, t.shape, t.valid_shape, new)
    return result_like(t, shape=new, valid_shape=valid)


def _transpose(b: Bound) -> Type:
    t = b.input.type
    require_rank(b, "input", t, min_rank=2)
    a1 = normalize_axis(b, "axis1", require_int_attr(b, "axis1"), t.rank)
    a2 = normalize_axis(b, "axis2", require_int_attr(b, "axis2"), t.rank)
    if a1 == a2:
        raise b.bad_value(f"axis1 and axis2 name the same axis {a1}")

    def swap(dims):
        dims = list(dims)
        dims[a1], dims[a2] = dims[a2], dims[a1]
        return dims

    valid = swap(t.valid_shape) if isinstance(t, TileType) and t.valid_shape is not None else None
    return result_like(t, shape=swap(t.shape), valid_shape=valid)


def _slice(b: Bound) -> Type:
    t = b.input.type
    shape, offset = index_values(b, "shape"), index_values(b, "offset")
    for name, vals in (("shape", shape), ("offset", offset)):
        if len(vals) != t.rank:
            raise b.fail(f"{name!r} has {len(vals)} entries but input rank is {t.rank} "
                         f"(shape {fmt_shape(t.shape)})")
    tile = isinstance(t, TileType)
    if b.clamp and tile:
        raise b.fail("clamp is tensor-only: an on-chip tile window cannot overhang its source")
    given = index_values(b, "valid_shape")
    if not b.clamp:  # a box may overhang the input where its valid region does not, as a load's
        check_window(b, "slice window", offset, given or shape, t.shape, "input")
    pad_mode(b)
    valid = list(given or shape)
    if len(valid) != t.rank:
        raise b.fail(f"'valid_shape' has {len(valid)} entries but input rank is {t.rank}")
    source = valid_of(t) if tile else t.shape
    for axis, (o, s) in enumerate(zip(offset, source)):
        so, ss, sv = dim_value(o), dim_value(s), dim_value(valid[axis])
        if so is not None and ss is not None and sv is not None:
            valid[axis] = const_dim(max(0, min(sv, ss - so)))
    drops = sorted({normalize_axis(b, "drop_dims", d, t.rank) for d in (b.drop_dims or ())})
    for d in drops:
        if dim_value(shape[d]) != 1 or dim_value(valid[d]) != 1:
            raise b.bad_value(f"drop_dims axis {d} must be a fully valid static unit dim, "
                              f"got shape {fmt_shape(shape)} valid {fmt_shape(valid)}")
    shape = [d for i, d in enumerate(shape) if i not in drops]
    valid = [d for i, d in enumerate(valid) if i not in drops]
    if tile and len(shape) < 2:  # tiles are 2-D: the dropped axes come back as leading units
        units = [const_dim(1)] * (2 - len(shape))
        shape, valid = units + shape, units + valid
    return result_like(t, shape=shape, valid_shape=valid if tile else None)


def _assemble(b: Bound) -> Type:
    target, source = b.target.type, b.source.type
    lead = 0
    if isinstance(target, TileType):
        require_same_kind(b, "source", source, "target", target)
        require_same_dtype(b, "source", source, "target", target)
        require_rank(b, "source", source, target.rank)
    elif source.rank > target.rank:  # a DDR target: the write converts the dtype like a store,
        require_rank(b, "source", source, target.rank)  # and a lower-rank source fills the
    else:  # trailing dims (leading extents 1)
        lead = target.rank - source.rank
    offset = index_values(b, "offset")
    if len(offset) != target.rank:
        raise b.fail(f"'offset' has {len(offset)} entries but target rank is {target.rank}")
    if not isinstance(b.atomic, AtomicType):
        raise b.bad_value(f"atomic must be a pl.AtomicType, got {b.atomic!r}")
    if b.atomic is not AtomicType.None_:
        if isinstance(target, TileType):
            raise b.fail("atomic is tensor-only: a tile-to-tile assemble has no global destination")
        require_dtype(b, "source", source.dtype, ATOMIC_DTYPES)
    valid = source.view.valid_shape if isinstance(source, TensorType) and source.view else None
    extent = [1] * lead + list(valid or source.shape)
    check_window(b, "assemble window", offset, extent, target.shape, "target")
    return target


def _concat(b: Bound) -> Type:
    a, c = b.src0.type, b.src1.type
    require_same_kind(b, "src1", c, "src0", a)
    require_rank(b, "src0", a, 2)
    require_rank(b, "src1", c, 2)
    require_same_dtype(b, "src1", c, "src0", a)
    require_dim(b, f"row counts differ: src0 {fmt_shape(a.shape)} vs src1 {fmt_shape(c.shape)}",
                c.shape[0], a.shape[0])
    n0, n1 = dim_value(a.shape[1]), dim_value(c.shape[1])
    cols = const_dim(n0 + n1) if n0 is not None and n1 is not None else Add(a.shape[1], c.shape[1])
    return result_like(a, shape=(a.shape[0], cols), valid_shape=None)


def _fillpad(b: Bound) -> Type:
    pad_mode(b)
    t = b.value.type
    return TileType(t.shape, t.dtype, None, None)


def _expand_clone(b: Bound) -> Type:
    src, target = b.input.type, b.target.type
    require_same_dtype(b, "input", src, "target", target)
    require_rank(b, "input", src, target.rank)
    for axis, (d, t) in enumerate(zip(src.shape, target.shape)):
        sd, st = dim_value(d), dim_value(t)
        if sd != 1 and (sd is None or st is None or sd != st):
            raise b.fail(f"operand 'input' {fmt_shape(src.shape)} does not broadcast to target "
                         f"{fmt_shape(target.shape)} on axis {axis} (each dim must match or be 1)")
    return target


def _register_all() -> None:
    X = "X"
    register("tensor.expand_clone", [P("input", "tensor"), P("target", "tensor")], _expand_clone,
             unit="memory", writes=("target",), reads=("input",),
             doc="Overwrite target with input broadcast to target's shape (input dims of extent 1 "
                 "repeat); the result is target.")
    family("reshape", [P("input", X), P("shape", "index_list")], _reshape, unit="vector", fusible=True,
           doc="View input with a new shape of the same element count.")
    family("transpose", [P("input", X), P("axis1", "attr"), P("axis2", "attr")], _transpose,
           unit="vector", doc="Swap two axes (negative indices allowed; rank >= 2).")
    family("slice", [P("input", X), P("shape", "index_list"), P("offset", "index_list"),
                     P("valid_shape", "index_list", None), P("drop_dims", "attr", None),
                     P("pad_value", "attr", None), P("clamp", "attr", False)], _slice, unit="vector",
           doc="The window [offset, offset + shape) of input; drop_dims erases unit axes.")
    family("assemble", [P("target", X), P("source", "shaped"), P("offset", "index_list"),
                        P("atomic", "attr", AtomicType.None_)], _assemble, unit="vector",
           writes=("target",), reads=("source",),
           doc="Write source into target at offset; returns the updated target. A tile source "
               "into a tensor target (in a kernel) is a store of the tile.")
    family("concat", [P("src0", X), P("src1", X)], _concat, unit="vector",
           doc="Column-wise concatenation of two [M, N] values.")
    register("tile.fillpad", [P("value", "tile"), P("pad_value", "attr", PadValue.zero)], _fillpad,
             unit="vector", fusible=True,
             doc="Fill the cells outside the valid region with pad_value; the result is fully valid.")


_register_all()
