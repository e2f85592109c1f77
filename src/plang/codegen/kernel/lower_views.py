"""Views and placement ops: `tile.extract` (a window copy), `tile.transpose_view` (a 2D
transpose), `tile.set_validshape` (the same data, a new valid region), `tile.reinterpret_view`
(the same bytes as another dtype and shape) and the placement ops
`tile.alloc`, `pl.reserve_buffer`, `pl.import_peer_buffer`, which the CPU lowers to their
result alone (a kernel's buffers are its own; a reserved buffer's base is the one asked for)."""

from __future__ import annotations

from ... import ir as pir
from ...dtypes import INT32
from .builder import mlir_type
from .context import LowerContext
from .lower_layout import copy_tile, lower_slice, lower_transpose
from .mlir import arith, ir, memref


def lower_extract(lc: LowerContext, short: str, a: dict):
    offset = pir.MakeTuple([a["index_row"], a["index_col"]])
    return lower_slice(lc, "slice", {"input": a["src"], "offset": offset, "shape": lc.call.type.shape})


def lower_transpose_view(lc: LowerContext, short: str, a: dict):
    return lower_transpose(lc, "transpose", {"input": a["tile"], "axis1": -2, "axis2": -1})


def lower_set_validshape(lc: LowerContext, short: str, a: dict):
    """The tile under a new valid region: its own buffer where it dies here, else a copy."""
    return lc.dies_into(a["tile"]) or copy_tile(lc, lc.operand(a["tile"]))


def lower_reinterpret_view(lc: LowerContext, short: str, a: dict):
    """The tile's bytes, row-major without row padding, read as the result's dtype and shape:
    the rows are packed into one byte buffer that both dtypes view."""
    src, out = lc.tile(a["data"]), lc.result_tile()
    kb = lc.kb
    nbytes = src.rows * src.cols * src.dtype.bits // 8
    raw = kb.alloc_scratch(ir.IntegerType.get_signless(8), nbytes)
    packed_in = typed_view(kb, raw, src.rows * src.cols, src.dtype)
    packed_out = typed_view(kb, raw, out.rows * out.cols, out.dtype)
    copy_rows(kb, src.rows, src.cols, src.buf, src.pitch, packed_in, src.cols)
    copy_rows(kb, out.rows, out.cols, packed_out, out.cols, out.buf, out.pitch)
    return out


def typed_view(kb, raw: ir.Value, count: int, dtype) -> ir.Value:
    return memref.view(ir.MemRefType.get([count], mlir_type(dtype)), raw, kb.idx(0), [])


def copy_rows(kb, rows: int, cols: int, src: ir.Value, src_pitch: int, dst: ir.Value,
               dst_pitch: int) -> None:
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        with kb.loop(0, cols) as lcol:
            c = lcol.induction_variable
            v = memref.load(src, [arith.addi(arith.muli(r, kb.idx(src_pitch)), c)])
            memref.store(v, dst, [arith.addi(arith.muli(r, kb.idx(dst_pitch)), c)])


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
    table["tile.reinterpret_view"] = lower_reinterpret_view
    for name in ("tile.alloc", "system.aic_initialize_pipe", "system.aiv_initialize_pipe"):
        table[name] = lower_nothing
    table["system.reserve_buffer"] = table["system.import_peer_buffer"] = lower_buffer_base
