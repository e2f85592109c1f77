"""TileCapacity: every tile of a core function fits its on-chip buffer.

A tile's byte size (static shape x dtype) must not exceed the capacity of its memory
space on the target `Device` (Vec when the space is not yet inferred). The cube's L0 tiles
are the exception, as in the reference: a matmul whose L0 tiles exceed L0 is split into
L0-sized blocks (the reference's AutoTileMatmulL0), so a Left / Right / Bias tile is bounded
by the Mat (L1) buffer it is staged from, and an Acc result (drained block by block) by
nothing on chip."""

from __future__ import annotations

from ...ir.enums import MemorySpace
from ...ir.function import Program
from ...ir.types import TileType, describe_type
from ...target import Device
from ..analysis.var_uses import stmt_defs, walk_stmts
from ..context import target_device
from ..diagnostics import PassError
from ..framework import define_verifier

#: the cube's L0 operand spaces: split at L0 when they overflow, bounded by Mat
L0_SPACES = frozenset({MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias})


def check_tile_capacity(program: Program, device: Device | None = None) -> None:
    device = device or target_device()
    for fn in program.functions.values():
        if not fn.func_type.is_core:
            continue
        for s in walk_stmts(fn.body):
            for v in stmt_defs(s):
                t = v.type
                if not isinstance(t, TileType) or t.nbytes is None or t.memory_space is MemorySpace.Acc:
                    continue
                space = t.memory_space or MemorySpace.Vec
                bound = MemorySpace.Mat if space in L0_SPACES else space
                cap = device.capacities.get(bound)
                if cap is not None and t.nbytes > cap:
                    staged = " it is staged from" if bound is not space else ""
                    raise PassError(f"tile {v.name!r} in {fn.name!r} is {describe_type(t)} = "
                                    f"{t.nbytes} bytes, more than the {bound.value} buffer's {cap} bytes"
                                    f"{staged}", s.span)


TileCapacity = define_verifier("TileCapacity", check_tile_capacity,
                               "Every tile of a core function fits its on-chip buffer.")
