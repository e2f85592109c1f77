"""Allocation and data movement: create / full, tile load / store / move, element read /
write and tensor dim queries."""

from __future__ import annotations

from ...dtypes import INT64
from ..enums import AtomicType, CachePolicy, MemorySpace, STPhase, TensorLayout, TileLayout
from ..types import ScalarType, TensorType, TileType, Type, dim_value
from .common import (
    ATOMIC_DTYPES,
    P,
    check_window,
    fmt_shape,
    fmt_type,
    index_values,
    normalize_axis,
    require_dtype,
    require_dtype_attr,
    require_int_attr,
    require_memory,
    require_scalar_matches,
)
from .registry import Bound, register

LOAD_TARGETS = (MemorySpace.Vec, MemorySpace.Mat)
MOVE_TARGETS = tuple(m for m in MemorySpace if m is not MemorySpace.DDR)  # any on-chip space


def _valid_shape(b: Bound, shape) -> tuple | None:
    """The `valid_shape` argument, checked against `shape` (None when absent)."""
    valid = index_values(b, "valid_shape")
    if not valid:
        return None
    if len(valid) != len(shape):
        raise b.fail(f"'valid_shape' has {len(valid)} entries but the shape {fmt_shape(shape)} "
                     f"has rank {len(shape)}")
    for axis, (v, s) in enumerate(zip(valid, shape)):
        sv, ss = dim_value(v), dim_value(s)
        if sv is not None and ss is not None and not 0 <= sv <= ss:
            raise b.bad_value(f"valid_shape {fmt_shape(valid)} exceeds shape {fmt_shape(shape)} "
                              f"on axis {axis}")
    return valid


def _tensor_create(b: Bound) -> Type:
    dtype = require_dtype_attr(b, "dtype")
    if not isinstance(b.layout, TensorLayout):
        raise b.bad_value(f"layout must be a pl.TensorLayout, got {b.layout!r}")
    return TensorType(index_values(b, "shape"), dtype, b.layout)


def _tensor_full(b: Bound) -> Type:
    dtype = require_dtype_attr(b, "dtype")
    require_scalar_matches(b, "value", b.value, dtype)
    return TensorType(index_values(b, "shape"), dtype)


def _tile_create(b: Bound) -> Type:
    dtype = require_dtype_attr(b, "dtype")
    shape = index_values(b, "shape")
    mem = require_memory(b, "target_memory", tuple(MemorySpace))
    if b.get("value") is not None:
        require_scalar_matches(b, "value", b.value, dtype)
    hints = [n for n in ("transpose", "flat_layout") if b.get(n) is not None]
    for name in hints:  # Mat layout hints (ZN / flat); no effect on the values
        if not isinstance(b[name], bool):
            raise b.fail(f"{name}= takes True or False, got {b[name]!r}")
    if len(hints) == 2 and b.transpose and b.flat_layout:
        raise b.bad_value("transpose= and flat_layout= are mutually exclusive")
    if b.get("flat_layout") and mem is not MemorySpace.Mat:
        raise b.bad_value("flat_layout=True needs target_memory=pl.Mem.Mat")
    return TileType(shape, dtype, mem, _valid_shape(b, shape))


def _load(b: Bound) -> Type:
    t = b.tensor.type
    offsets, shapes = index_values(b, "offsets"), index_values(b, "shapes")
    for name, vals in (("offsets", offsets), ("shapes", shapes)):
        if len(vals) != t.rank:
            raise b.fail(f"{name!r} has {len(vals)} entries but tensor rank is {t.rank} "
                         f"(shape {fmt_shape(t.shape)})")
    mem = require_memory(b, "target_memory", LOAD_TARGETS)
    valid = _valid_shape(b, shapes)
    if not b.clamp:
        check_window(b, "load window", offsets, valid or shapes, t.shape, "tensor")
    if b.cache is not None and not isinstance(b.cache, CachePolicy):
        raise b.bad_value(f"cache must be a pl.CachePolicy, got {b.cache!r}")
    return TileType(shapes, t.dtype, mem, valid)


def _store(b: Bound) -> Type:
    tile, out = b.tile.type, b.output_tensor.type  # a dtype mismatch converts on store
    offsets = index_values(b, "offsets")
    if len(offsets) != out.rank:
        raise b.fail(f"'offsets' has {len(offsets)} entries but output tensor rank is {out.rank} "
                     f"(shape {fmt_shape(out.shape)})")
    shapes = index_values(b, "shapes")
    if shapes:
        if len(shapes) != out.rank:
            raise b.fail(f"'shapes' has {len(shapes)} entries but output tensor rank is {out.rank}")
        extent = shapes
    else:  # a tile of lower rank fills the trailing dims, the leading ones with extent 1
        if tile.rank > out.rank:
            raise b.fail(f"tile {fmt_type(tile)} has rank {tile.rank} but output tensor "
                         f"{fmt_type(out)} has rank {out.rank}; pass shapes= for an ND partition")
        extent = [1] * (out.rank - tile.rank) + list(tile.effective_valid_shape)
    check_window(b, "store window", offsets, extent, out.shape, "output tensor")
    if not isinstance(b.atomic, AtomicType) or not isinstance(b.st_phase, STPhase):
        raise b.bad_value(f"atomic must be a pl.AtomicType and st_phase a pl.STPhase, "
                          f"got {b.atomic!r} and {b.st_phase!r}")
    if b.atomic is AtomicType.Add:
        require_dtype(b, "tile", tile.dtype, ATOMIC_DTYPES)
        require_dtype(b, "output_tensor", out.dtype, ATOMIC_DTYPES)
    return out


def _move(b: Bound) -> Type:
    t = b.tile.type
    mem = require_memory(b, "target_memory", MOVE_TARGETS)
    if mem is None:
        raise b.fail("target_memory is required")
    for name in ("blayout", "slayout"):
        if b[name] is not None and not isinstance(b[name], TileLayout):
            raise b.bad_value(f"{name} must be a pl.TileLayout, got {b[name]!r}")
    return TileType(t.shape, t.dtype, mem, t.valid_shape)


def _element_offsets(b: Bound, name: str, t) -> None:
    offs = index_values(b, "offset")
    if len(offs) not in (1, t.rank):
        raise b.fail(f"'offset' has {len(offs)} entries; expected 1 (flat index) or the rank {t.rank} "
                     f"of {name!r} {fmt_type(t)}")


def _read(b: Bound) -> Type:
    t = b.src.type
    _element_offsets(b, "src", t)
    return ScalarType(t.dtype)


def _write(b: Bound) -> Type:
    t = b.dst.type
    _element_offsets(b, "dst", t)
    require_scalar_matches(b, "value", b.value, t.dtype)
    return t


def _dim(b: Bound) -> Type:
    t = b.tensor.type
    normalize_axis(b, "axis", require_int_attr(b, "axis"), t.rank)
    return ScalarType(INT64)


def _register_all() -> None:
    shape_dtype = [P("shape", "index_list"), P("dtype", "attr")]
    register("tensor.create", shape_dtype + [P("layout", "attr", TensorLayout.ND),
                                             P("manual_dep", "attr", False)],
             _tensor_create, unit="alloc", unified=False,  # pl.create_tensor
             doc="A new uninitialised DDR tensor.")
    register("tensor.full", shape_dtype + [P("value", "scalar")], _tensor_full, unit="alloc",
             doc="A new DDR tensor with every element set to value.")
    register("tile.create", shape_dtype + [P("target_memory", "attr", None),
                                           P("valid_shape", "index_list", None),
                                           P("transpose", "attr", None), P("flat_layout", "attr", None)],
             _tile_create, unit="alloc", row_local=True, unified=False,  # pl.create_tile
             doc="A new uninitialised on-chip tile; transpose= / flat_layout= pick a Mat layout "
                 "(ZN / flat), with no effect on the values.")
    register("tile.full", shape_dtype + [P("value", "scalar"), P("target_memory", "attr", None),
                                         P("valid_shape", "index_list", None)],
             _tile_create, unit="alloc", row_local=True, fusible=True,
             doc="A new on-chip tile with every element set to value.")
    register("tile.load", [P("tensor", "tensor"), P("offsets", "index_list"), P("shapes", "index_list"),
                           P("valid_shape", "index_list", None), P("target_memory", "attr", None),
                           P("clamp", "attr", False), P("cache", "attr", None)],
             _load, unit="memory", row_local=True, fusible=True,
             doc="Copy the window [offsets, offsets + shapes) of a DDR tensor into a tile; only the "
                 "valid extent is read.")
    register("tile.store", [P("tile", "tile"), P("offsets", "index_list"), P("output_tensor", "tensor"),
                            P("shapes", "index_list", None), P("atomic", "attr", AtomicType.None_),
                            P("st_phase", "attr", STPhase.Unspecified)],
             _store, unit="memory", writes=("output_tensor",), reads=("tile",), row_local=True,
             doc="Copy a tile's valid region into a DDR tensor at offsets (converting to the tensor's "
                 "dtype with tile.cast's default rules); returns the updated tensor.")
    register("tile.move", [P("tile", "tile"), P("target_memory", "attr"), P("blayout", "attr", None),
                           P("slayout", "attr", None)],
             _move, unit="memory", fusible=True, doc="Copy a tile into another on-chip memory space.")
    for ns in ("tensor", "tile"):
        register(f"{ns}.read", [P("src", ns), P("offset", "indices")], _read, unit="scalar",
                 doc="Read one element (a flat index or one index per axis) as a scalar.")
        register(f"{ns}.write", [P("dst", ns), P("offset", "indices"), P("value", "scalar")], _write,
                 unit="scalar", writes=("dst",), reads=(),
                 doc="Write a scalar into one element of dst; returns dst.")
    register("tensor.dim", [P("tensor", "tensor"), P("axis", "attr")], _dim, unit="scalar", reads=(),
             doc="The extent of one axis of a tensor (negative axes allowed) as an INT64 scalar.")


_register_all()
