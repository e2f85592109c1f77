"""Views and placement: sub-tile extraction, zero-copy reinterpretations of a tile
(`transpose_view`, `reinterpret_view`, `set_validshape`) and the reference's placement ops
(`tile.alloc`, `pl.reserve_buffer`, `pl.import_peer_buffer`, `pl.aic/aiv_initialize_pipe`),
which only place memory or set up pipes and mean nothing to the CPU backend beyond their result."""

from __future__ import annotations

from ...dtypes import INT32
from ..enums import MemorySpace, PadValue, TileLayout
from ..types import PtrType, ScalarType, TileType, TileView, Type, dim_value
from .common import (
    CASTABLE,
    VOID,
    P,
    check_window,
    fmt_type,
    index_values,
    require_dtype_attr,
    require_int_attr,
    require_memory,
    require_rank,
)
from .registry import Bound, register

_FLIP = {TileLayout.row_major: TileLayout.col_major, TileLayout.col_major: TileLayout.row_major,
         TileLayout.none_box: TileLayout.none_box}


def implicit_layouts(t: TileType) -> tuple[TileLayout, TileLayout]:
    """A tile's (block, scatter) layout: its view's, else the memory space's default (an L1
    `Mat` tile is fractal NZ: column-major blocks of row-major fractals)."""
    v = t.view
    if t.memory_space is MemorySpace.Mat:
        default = (TileLayout.col_major, TileLayout.row_major)
    else:
        default = (TileLayout.row_major, TileLayout.none_box)
    if v is None:
        return default
    return (v.blayout or default[0], v.slayout or default[1])


def _alloc(b: Bound) -> Type:
    require_memory(b, "memory_space", tuple(MemorySpace))
    require_int_attr(b, "size", 0)
    return PtrType()


def _extract(b: Bound) -> Type:
    t = b.src.type
    require_rank(b, "src", t, 2)
    shape = index_values(b, "shape")
    if len(shape) != 2:
        raise b.fail(f"'shape' must have 2 entries, got {len(shape)}")
    for name in ("index_row", "index_col"):
        if not (isinstance(b[name].type, ScalarType) and b[name].type.dtype.is_int):
            raise b.fail(f"{name!r} must be an integer scalar, got {fmt_type(b[name].type)}")
    check_window(b, "extract window", (b.index_row, b.index_col), shape, t.shape, "src")
    return TileType(shape, t.dtype, require_memory(b, "target_memory", tuple(MemorySpace)))


def _transpose_view(b: Bound) -> Type:
    t = b.tile.type
    require_rank(b, "tile", t, min_rank=2)
    blayout, slayout = implicit_layouts(t)
    fractal, pad = (None, PadValue.null) if t.view is None else (t.view.fractal, t.view.pad)
    view = TileView(_FLIP[blayout], _FLIP[slayout], fractal, pad)
    valid = None if t.valid_shape is None else (*t.valid_shape[:-2], t.valid_shape[-1], t.valid_shape[-2])
    return TileType((*t.shape[:-2], t.shape[-1], t.shape[-2]), t.dtype, t.memory_space, valid, view)


def _reinterpret_view(b: Bound) -> Type:
    t = b.data.type
    dtype = require_dtype_attr(b, "dtype", CASTABLE)
    if dtype is t.dtype:
        raise b.fail(f"dtype must differ from the source dtype {t.dtype.name}")
    shape = index_values(b, "shape")
    if not shape:
        last = dim_value(t.shape[-1])
        if last is None or (last * t.dtype.bits) % dtype.bits:
            raise b.fail(f"cannot rescale the last dim of {fmt_type(t)} to {dtype.name}; pass shape=")
        shape = (*t.shape[:-1], last * t.dtype.bits // dtype.bits)
    new = TileType(shape, dtype)
    if t.nbytes is not None and new.nbytes is not None and t.nbytes != new.nbytes:
        raise b.fail(f"shape {list(map(dim_value, shape))} of {dtype.name} holds {new.nbytes} bytes, "
                     f"but {fmt_type(t)} holds {t.nbytes}")
    return TileType(shape, dtype, t.memory_space)


def valid_extents(b: Bound, operand: str) -> tuple:
    """`set_validshape`'s (valid_rows, valid_cols) of the rank-2 `operand`, checked: integer
    scalars within the operand's extents where both are static."""
    t = b[operand].type
    require_rank(b, operand, t, 2)
    valid = (b.valid_rows, b.valid_cols)
    for axis, (v, n) in enumerate(zip(valid, t.shape)):
        if not (isinstance(v.type, ScalarType) and v.type.dtype.is_int):
            raise b.fail(f"valid extents must be integer scalars, got {fmt_type(v.type)}")
        sv, sn = dim_value(v), dim_value(n)
        if sv is not None and sn is not None and not 0 <= sv <= sn:
            raise b.bad_value(f"valid extent {sv} on axis {axis} exceeds the {operand} extent {sn}")
    return valid


def _set_validshape(b: Bound) -> Type:
    t, valid = b.tile.type, valid_extents(b, "tile")
    return TileType(t.shape, t.dtype, t.memory_space, valid, t.view, t.memref)


def _buffer(b: Bound) -> Type:
    if not isinstance(b.name, str) or not b.name:
        raise b.fail("name= must be a non-empty string")
    if "size" in b:
        require_int_attr(b, "size", 0)
        require_int_attr(b, "base", -1)
    elif not isinstance(b.peer_func, str) or not b.peer_func:
        raise b.fail("peer_func= must name the function that reserves the buffer")
    return ScalarType(INT32)


def _pipe_init(b: Bound) -> Type:
    for name in ("dir_mask", "slot_size"):
        require_int_attr(b, name, 0)
    for name in ("slot_num", "local_slot_num", "id"):
        if b[name] is not None:
            require_int_attr(b, name, 0)
    if b.local_slot_num is not None and b.slot_num is not None and b.local_slot_num > b.slot_num:
        raise b.bad_value(f"local_slot_num {b.local_slot_num} exceeds slot_num {b.slot_num}")
    return VOID


def _register_all() -> None:
    register("tile.alloc", [P("memory_space", "attr"), P("size", "attr"), P("pinned", "attr", False)],
             _alloc, unit="alloc", unified=False,
             doc="A base pointer for size bytes of on-chip memory (placement; the CPU allocates itself).")
    register("tile.extract", [P("src", "tile"), P("index_row", "scalar"), P("index_col", "scalar"),
                              P("shape", "index_list"), P("target_memory", "attr")],
             _extract, unit="memory",
             doc="Copy the 2D window at (index_row, index_col) of extent shape into target_memory.")
    register("tile.transpose_view", [P("tile", "tile")], _transpose_view, unit="memory",
             doc="The tile with its two trailing axes swapped (a zero-copy layout view on Ascend).")
    register("tile.reinterpret_view", [P("data", "tile"), P("dtype", "attr"), P("shape", "index_list", None)],
             _reinterpret_view, unit="memory",
             doc="The same bytes read as another dtype; the last dim scales unless shape= is given.")
    register("tile.set_validshape", [P("tile", "tile"), P("valid_rows", "scalar"), P("valid_cols", "scalar")],
             _set_validshape, unit="memory", fusible=True,
             doc="The tile with its valid region set to [valid_rows, valid_cols]; no data moves.")
    register("system.reserve_buffer", [P("name", "attr", ""), P("size", "attr", 0), P("base", "attr", -1)],
             _buffer, unit="system", spelling="pl.reserve_buffer",
             doc="Reserve a named cross-core buffer of size bytes; returns its base (placement only).")
    register("system.import_peer_buffer", [P("name", "attr", ""), P("peer_func", "attr", "")],
             _buffer, unit="system", spelling="pl.import_peer_buffer",
             doc="The base of the buffer a peer function of the group reserved as name (placement only).")
    pipe = [P("c2v_consumer_buf", "scalar", 0), P("v2c_consumer_buf", "scalar", 0), P("dir_mask", "attr"),
            P("slot_size", "attr"), P("slot_num", "attr", None), P("local_slot_num", "attr", None),
            P("id", "attr", None)]
    for side, who in (("aic", "cube"), ("aiv", "vector lanes")):
        register(f"system.{side}_initialize_pipe", pipe, _pipe_init, unit="system",
                 spelling=f"pl.{side}_initialize_pipe",
                 doc=f"Set up the cross-core pipes on the {who} (the CPU runtime owns its pipes: no-op).")


_register_all()
