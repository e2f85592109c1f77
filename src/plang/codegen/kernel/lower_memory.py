"""DDR ↔ tile transfers: `tile.load` and `tile.store`.

A transfer covers the tile's valid region clipped to the tensor's bounds. Rows stream as
masked vector transfers on the innermost (unit-stride) dimension; a load zero-fills the
rest of the tile so later ops never see stale data. A load whose single use fuses stays a
`LazyTile` (its chunks are read from DDR where they are consumed), and a store writes a
lazy tile's chunks straight to DDR.
"""

from __future__ import annotations

from ...ir.enums import AtomicType
from .builder import KernelBuilder, TileBuf, geometry
from .context import DdrTensor, LowerContext, tile_dims
from .mlir import arith, ir, vector
from .vectors import LazyTile, read_chunk, vtype


def _clip(kb: KernelBuilder, want: ir.Value, dim: ir.Value, off: ir.Value, cap: int) -> ir.Value:
    """max(0, min(want, dim - off, cap))."""
    n = arith.minsi(want, arith.subi(dim, off))
    return arith.maxsi(arith.minsi(n, kb.idx(cap)), kb.idx(0))


def _region(lc: LowerContext, ddr: DdrTensor, tile_rows: int, tile_cols: int, offsets: list[ir.Value],
            valid: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value, list[ir.Value]]:
    """(rows, cols, offsets) of a rank-1 or rank-2 transfer after clipping."""
    kb = lc.kb
    if ddr.rank == 1:
        cols = _clip(kb, valid[1], ddr.dim(0), offsets[0], tile_cols)
        return kb.idx(1), cols, offsets
    if ddr.rank != 2:
        raise lc.error(f"{lc.call.op.name} on a rank-{ddr.rank} tensor is not supported "
                       "(flatten it to 2D first)")
    rows = _clip(kb, valid[0], ddr.dim(0), offsets[0], tile_rows)
    cols = _clip(kb, valid[1], ddr.dim(1), offsets[1], tile_cols)
    return rows, cols, offsets


def _ddr_index(ddr: DdrTensor, offsets: list[ir.Value], r: ir.Value, c: ir.Value) -> list[ir.Value]:
    if ddr.rank == 1:
        return [arith.addi(offsets[0], c)]
    return [arith.addi(offsets[0], r), arith.addi(offsets[1], c)]


def _mask(width: int, n: ir.Value) -> ir.Value:
    """The first `n` lanes (clamped to [0, width])."""
    i1 = ir.IntegerType.get_signless(1)
    return vector.create_mask(ir.VectorType.get([width], i1), [n])


def _map(rank: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))


def lower_load(lc: LowerContext, short: str, a: dict) -> TileBuf | LazyTile:
    kb = lc.kb
    ddr = lc.ddr(a["tensor"])
    t = lc.call.type
    rows_n, cols_n = tile_dims(t, lc.where("tile.load"))
    width, pitch = geometry(t.dtype, cols_n)
    offsets = [lc.index(e) for e in a["offsets"].elements]
    valid = lc.valid_of(t)
    rows, cols, offsets = _region(lc, ddr, rows_n, cols_n, offsets, valid)
    vt = vtype(width, t.dtype)
    pad = kb.const_of(vt.element_type, 0)
    zero = kb.idx(0)

    def chunk(r: ir.Value, c: ir.Value) -> ir.Value:
        inside = arith.cmpi(arith.CmpIPredicate.slt, r, rows)
        n = arith.select(inside, arith.subi(cols, c), zero)
        return vector.transfer_read(vt, ddr.memref, _ddr_index(ddr, offsets, r, c), _map(ddr.rank),
                                    pad, [True], mask=_mask(width, n))

    lazy = LazyTile(t.dtype, rows_n, cols_n, pitch, width, valid, chunk)
    if lc.defer:
        return lazy
    out = lc.result_tile()
    lc.store_result(out, lazy)
    return out


def lower_store(lc: LowerContext, short: str, a: dict) -> DdrTensor:
    kb = lc.kb
    tile = lc.operand(a["tile"])
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
    rows, cols, offsets = _region(lc, ddr, tile.rows, tile.cols, offsets, valid)
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        with kb.loop(0, tile.pitch, tile.width) as lcol:
            c = lcol.induction_variable
            v = read_chunk(kb, tile, r, c)
            vector.transfer_write(None, v, ddr.memref, _ddr_index(ddr, offsets, r, c), _map(ddr.rank),
                                  [True], mask=_mask(tile.width, arith.subi(cols, c)))
    return ddr


def register(table: dict) -> None:
    table["tile.load"] = lower_load
    table["tile.store"] = lower_store
