"""Tile-level ops (`tile.*`): on-chip compute, legal only in core functions after lowering."""

from __future__ import annotations

from ...dtypes import INDEX
from ..enums import MemorySpace
from ..types import ScalarType, TileType, Type, format_shape
from .common import elementwise_binary, index_values
from .registry import Bound, Param, register

T = Param


def _load(b: Bound) -> Type:
    t = b.tensor.type
    offsets, shapes = index_values(b, "offsets"), index_values(b, "shapes")
    if len(offsets) != t.rank:
        raise b.fail(f"'offsets' has {len(offsets)} entries but tensor rank is {t.rank} "
                     f"(shape {format_shape(t.shape)})")
    if len(shapes) != t.rank:
        raise b.fail(f"'shapes' has {len(shapes)} entries but tensor rank is {t.rank} "
                     f"(shape {format_shape(t.shape)})")
    mem = b.target_memory
    if mem is not None and mem not in (MemorySpace.Vec, MemorySpace.Mat):
        raise b.bad_value(f"target_memory must be MemorySpace.Vec or MemorySpace.Mat, got {mem}")
    valid = index_values(b, "valid_shape") or None
    return TileType(shapes, t.dtype, mem, valid)


register("tile.load", [T("tensor", "tensor"), T("offsets", "index_list"), T("shapes", "index_list"),
                       T("valid_shape", "index_list", None), T("target_memory", "attr", None),
                       T("clamp", "attr", False), T("cache", "attr", None)],
         _load, unit="memory", doc="Copy a region of a DDR tensor into a tile.")


def _store(b: Bound) -> Type:
    tile, out = b.tile.type, b.output_tensor.type
    if tile.dtype is not out.dtype:
        raise b.fail(f"tile dtype {tile.dtype.name} does not match output tensor dtype {out.dtype.name}")
    if len(index_values(b, "offsets")) != out.rank:
        raise b.fail(f"'offsets' has {len(index_values(b, 'offsets'))} entries but output tensor "
                     f"rank is {out.rank}")
    return out


register("tile.store", [T("tile", "tile"), T("offsets", "index_list"), T("output_tensor", "tensor"),
                        T("shapes", "index_list", None), T("atomic", "attr", None),
                        T("st_phase", "attr", None)],
         _store, unit="memory", writes=("output_tensor",),
         doc="Copy a tile back into a region of a DDR tensor; returns the updated tensor.")

register("tile.add", [T("lhs", "tile"), T("rhs", "tile")], elementwise_binary, unit="vector",
         doc="Elementwise addition.")

register("tile.get_block_idx", [], lambda b: ScalarType(INDEX), unit="scalar",
         doc="Index of the current block in an SPMD launch.")

