"""Views and placement ops: `tile.extract` (a window copy), `tile.transpose_view` (a 2D
transpose), `tile.set_validshape` (the same data, a new valid region) and the placement ops
`tile.alloc`, `pl.reserve_buffer`, `pl.import_peer_buffer`, which the CPU lowers to their
result alone (a kernel's buffers are its own; a reserved buffer's base is the one asked for)."""

from __future__ import annotations

from ... import ir as pir
from ...dtypes import INT32
from .context import LowerContext
from .lower_layout import lower_move, lower_slice, lower_transpose
from .mlir import arith, ir


def lower_extract(lc: LowerContext, short: str, a: dict):
    offset = pir.MakeTuple([a["index_row"], a["index_col"]])
    return lower_slice(lc, "slice", {"input": a["src"], "offset": offset})


def lower_transpose_view(lc: LowerContext, short: str, a: dict):
    return lower_transpose(lc, "transpose", {"input": a["tile"], "axis1": -2, "axis2": -1})


def lower_set_validshape(lc: LowerContext, short: str, a: dict):
    return lower_move(lc, "move", {"tile": a["tile"]})


def lower_nothing(lc: LowerContext, short: str, a: dict) -> None:
    """Placement and pipe set-up: the kernel's buffers and the runtime's pipes exist already."""
    return None


def lower_buffer_base(lc: LowerContext, short: str, a: dict):
    base = a.get("base", 0)
    return arith.constant(ir.IntegerType.get_signless(32), max(base, 0)), INT32


def register(table: dict) -> None:
    table["tile.extract"] = lower_extract
    table["tile.transpose_view"] = lower_transpose_view
    table["tile.set_validshape"] = lower_set_validshape
    for name in ("tile.alloc", "system.aic_initialize_pipe", "system.aiv_initialize_pipe"):
        table[name] = lower_nothing
    table["system.reserve_buffer"] = table["system.import_peer_buffer"] = lower_buffer_base
