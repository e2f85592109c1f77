"""TileCapacity: every tile of a core function fits its on-chip buffer.

A tile's byte size (static shape x dtype) must not exceed the capacity of its memory
space on the target `Device` (Vec when the space is not yet inferred)."""

from __future__ import annotations

from ...ir.enums import MemorySpace
from ...ir.function import Program
from ...ir.types import TileType, describe_type
from ...target import Device
from ..analysis.var_uses import stmt_defs, walk_stmts
from ..context import target_device
from ..diagnostics import PassError
from ..framework import define_verifier


def check_tile_capacity(program: Program, device: Device | None = None) -> None:
    device = device or target_device()
    for fn in program.functions.values():
        if not fn.func_type.is_core:
            continue
        for s in walk_stmts(fn.body):
            for v in stmt_defs(s):
                t = v.type
                if not isinstance(t, TileType) or t.nbytes is None:
                    continue
                space = t.memory_space or MemorySpace.Vec
                cap = device.capacities.get(space)
                if cap is not None and t.nbytes > cap:
                    raise PassError(f"tile {v.name!r} in {fn.name!r} is {describe_type(t)} = "
                                    f"{t.nbytes} bytes, more than the {space.value} buffer's {cap} bytes",
                                    s.span)


TileCapacity = define_verifier("TileCapacity", check_tile_capacity,
                               "Every tile of a core function fits its on-chip buffer.")
