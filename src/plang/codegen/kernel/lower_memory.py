"""DDR ↔ tile transfers: `tile.load` and `tile.store`.

A transfer covers the tile's valid region clipped to the tensor's bounds. Rows stream as
masked vector transfers on the innermost (unit-stride) dimension; a load zero-fills the
rest of the tile so later ops never see stale data.
"""

from __future__ import annotations

from ...ir.enums import AtomicType
from .builder import KernelBuilder, TileBuf
from .context import DdrTensor, LowerContext
from .mlir import arith, ir, vector
from .vector_math import splat
from .vectors import load_chunk, store_chunk, vtype


def _clip(kb: KernelBuilder, want: ir.Value, dim: ir.Value, off: ir.Value, cap: int) -> ir.Value:
    """max(0, min(want, dim - off, cap))."""
    n = arith.minsi(want, arith.subi(dim, off))
    return arith.maxsi(arith.minsi(n, kb.idx(cap)), kb.idx(0))


def _region(lc: LowerContext, ddr: DdrTensor, tile: TileBuf, offsets: list[ir.Value],
            valid: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value, list[ir.Value]]:
    """(rows, cols, offsets) of a rank-1 or rank-2 transfer after clipping."""
    kb = lc.kb
    if ddr.rank == 1:
        cols = _clip(kb, valid[1], ddr.dim(0), offsets[0], tile.cols)
        return kb.idx(1), cols, offsets
    if ddr.rank != 2:
        raise lc.error(f"{lc.call.op.name} on a rank-{ddr.rank} tensor is not supported "
                       "(flatten it to 2D first)")
    rows = _clip(kb, valid[0], ddr.dim(0), offsets[0], tile.rows)
    cols = _clip(kb, valid[1], ddr.dim(1), offsets[1], tile.cols)
    return rows, cols, offsets


def _ddr_index(ddr: DdrTensor, offsets: list[ir.Value], r: ir.Value, c: ir.Value) -> list[ir.Value]:
    if ddr.rank == 1:
        return [arith.addi(offsets[0], c)]
    return [arith.addi(offsets[0], r), arith.addi(offsets[1], c)]


def _mask(tile: TileBuf, cols: ir.Value, c: ir.Value) -> ir.Value:
    i1 = ir.IntegerType.get_signless(1)
    return vector.create_mask(ir.VectorType.get([tile.width], i1), [arith.subi(cols, c)])


def _map(rank: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))


def lower_load(lc: LowerContext, short: str, a: dict) -> TileBuf:
    kb = lc.kb
    ddr = lc.ddr(a["tensor"])
    out = lc.result_tile()
    offsets = [lc.index(e) for e in a["offsets"].elements]
    rows, cols, offsets = _region(lc, ddr, out, offsets, out.valid)
    elem = vtype(out.width, out.dtype).element_type
    pad = kb.const_of(elem, 0)
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(out.pitch))
        with kb.loop(0, out.pitch, out.width) as lcol:
            c = lcol.induction_variable
            v = vector.transfer_read(vtype(out.width, out.dtype), ddr.memref,
                                     _ddr_index(ddr, offsets, r, c), _map(ddr.rank), pad, [True],
                                     mask=_mask(out, cols, c))
            store_chunk(out, arith.addi(base, c), v)
    zero = splat(vtype(out.width, out.dtype), 0)
    with kb.loop(rows, out.rows) as lr:
        base = arith.muli(lr.induction_variable, kb.idx(out.pitch))
        with kb.loop(0, out.pitch, out.width) as lcol:
            store_chunk(out, arith.addi(base, lcol.induction_variable), zero)
    return out


def lower_store(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    kb = lc.kb
    tile = lc.tile(a["tile"])
    ddr = lc.ddr(a["output_tensor"])
    atomic = a.get("atomic")
    if atomic not in (None, AtomicType.None_, 0):
        raise lc.error(f"tile.store with atomic={atomic!r} is not supported by the kernel backend")
    offsets = [lc.index(e) for e in a["offsets"].elements]
    valid = tile.valid
    if a.get("shapes") is not None:
        shp = [lc.index(e) for e in a["shapes"].elements]
        valid = (shp[0], shp[-1]) if len(shp) == 2 else (kb.idx(1), shp[-1])
        valid = (arith.minsi(valid[0], tile.valid[0]), arith.minsi(valid[1], tile.valid[1]))
    rows, cols, offsets = _region(lc, ddr, tile, offsets, valid)
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(tile.pitch))
        with kb.loop(0, tile.pitch, tile.width) as lcol:
            c = lcol.induction_variable
            v = load_chunk(tile, arith.addi(base, c))
            vector.transfer_write(None, v, ddr.memref, _ddr_index(ddr, offsets, r, c), _map(ddr.rank),
                                  [True], mask=_mask(tile, cols, c))
    return ddr


def register(table: dict) -> None:
    table["tile.load"] = lower_load
    table["tile.store"] = lower_store
