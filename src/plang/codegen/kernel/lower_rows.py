"""Row regions: `with pl.fused(rows=R):` (decided by `FuseTileOps`) lowered as one loop
over the R rows.

The body lowers in row mode (`LowerContext.row_mode`): each [R, ..] tile is a one-row tile
(a one-row buffer, a view of one row of a full buffer, or a lazy tile reading row `r`). So
row softmax (`row_max` → `row_expand_sub` → `exp` → `row_sum` → `row_expand_div` → store)
runs per row as a max pass over the loaded row, an exp + sum pass into one row buffer and
a scale + store pass, all within L1. Tiles read from before the region are viewed one row
at a time; tiles the region defines and later code uses are copied row by row into full
buffers (the yield hint's buffer when there is one). A one-row tile from before the
region (a column broadcast's [1, N] operand) stays bound whole: every row reads all of it.
A region the parser read from source is checked first: every statement must be row-local
with R rows.
"""

from __future__ import annotations

from ...ir.expr import Var
from ...ir.stmt import Assign
from ...ir.types import TileType
from ...passes.analysis.row_regions import (
    op_call,
    row_count,
    through_fused,
    tile_rows,
    tiles_read_before_defined,
    use_counts,
)
from .builder import KernelBuilder, TileBuf
from .context import LowerContext, RowMode
from .mlir import arith, ir, memref, scf
from .vectors import copy_tile


def row_view(kb: KernelBuilder, tile: TileBuf, row: ir.Value) -> TileBuf:
    """Row `row` of a full tile buffer as a one-row tile (valid rows: 1 or 0)."""
    offset = arith.muli(row, kb.idx(tile.pitch))
    buf = memref.subview(tile.buf, [offset], [tile.pitch], [1])
    inside = arith.cmpi(arith.CmpIPredicate.ult, row, tile.valid[0])
    valid = (arith.select(inside, kb.idx(1), kb.idx(0)), tile.valid[1])
    return TileBuf(buf, tile.dtype, 1, tile.cols, tile.pitch, tile.width, valid)


SHORT_ROW = 256
"""The widest row (in elements) that a row region lowers two at a time: each trip of its loop
lowers the body for rows r and r + 1, so one row's reductions and scalar tail overlap the
other's vector work. Attention's score rows (8x512x512x64 on a Zen 5 VM, in-process A/B):
BF16 kv=128 1.05 -> 0.94 ms, kv=256 1.14 -> 1.07, FP32 kv=128 1.58 -> 1.47; 1024-column
softmax / norm rows gain nothing and lose up to 4%."""


def _widest(body: list, outside: dict) -> int:
    """The most columns of a tile the region defines or reads from before it."""
    tiles = [st.var.type for st in through_fused(body)
             if isinstance(st, Assign) and isinstance(st.var.type, TileType)]
    tiles += [v.type for v in outside]
    return max((t.static_shape[-1] for t in tiles if t.static_shape), default=0)


def _identity_source(st: Assign, body: list, escaping: dict) -> Assign | None:
    """Where `st` casts a tile to its own dtype (the identity) as its last read, and the region
    defines that tile and reads it nowhere after: the tile's statement, which may compute it
    straight into `st`'s destination."""
    call = op_call(st)
    if call is None or call.op.name != "tile.cast" or not isinstance(call.args[0], Var):
        return None
    x = call.args[0]
    stmts = through_fused(body)
    src = next((s for s in stmts if isinstance(s, Assign) and s.var is x), None)
    if src is None or x in escaping or x.type.dtype is not st.var.type.dtype:
        return None
    return None if use_counts(stmts[stmts.index(st) + 1:])[x] else src


def lower_row_region(lc: LowerContext, body: list, rows: int, hints: dict) -> None:
    """Lower the statements of a row region as one loop over its `rows` rows (two per trip
    where they are at most `SHORT_ROW` wide)."""
    for st in through_fused(body):
        if row_count(st, nested=True) != rows:
            raise lc.error(f"`with pl.fused(rows={rows})` holds a statement that is not row-local "
                           f"with {rows} rows: {st!r}")
    inside = use_counts(body)
    escaping = {st.var: st for st in through_fused(body)
                if isinstance(st, Assign) and isinstance(st.var.type, TileType)
                and lc.use_counts[st.var] > inside[st.var]}
    targets = {v: hints.get(st) or lc.new_tile(v.type) for v, st in escaping.items()}
    # a fresh target aliases nothing the region reads: its rows are computed in place
    in_place = {st: v for v, st in escaping.items() if hints.get(st) is None}
    in_place.update({src: in_place[st] for st in list(in_place)
                     if (src := _identity_source(st, body, escaping)) is not None})
    outside = {v: lc.tile(v) for v in tiles_read_before_defined(body)}
    kb = lc.kb
    step = 2 if rows % 2 == 0 and _widest(body, outside) <= SHORT_ROW else 1
    loop = scf.ForOp(kb.idx(0), kb.idx(rows), kb.idx(step), [])
    with ir.InsertionPoint(loop.body):
        for u in range(step):
            r = arith.addi(loop.induction_variable, kb.idx(u)) if u else loop.induction_variable
            with lc.in_row_mode(RowMode(r, rows)):
                for v, full in outside.items():
                    if tile_rows(v.type) == rows:  # else a broadcast row, already bound whole
                        lc.bind(v, row_view(kb, full, r))
                views = {v: row_view(kb, full, r) for v, full in targets.items()}
                lc.driver.lower_block(lc, body, {st: views[v] for st, v in in_place.items()})
                for v, view in views.items():
                    row = lc.operand(v)
                    if not (isinstance(row, TileBuf) and row.buf == view.buf):
                        copy_tile(kb, row, view)
        scf.yield_([])
    for v, full in {**outside, **targets}.items():
        lc.bind(v, full)

