"""Row-wise fusion: a run of row-local tile statements lowered inside one loop over rows.

A statement is row-local when row r of its result depends only on row r of its tile
operands: loads, stores, elementwise ops, row reductions and `row_expand_*`, with every tile
it touches having the same row count R (leading dims folded into rows). A maximal run of
such statements in one block (pure scalar assignments may sit between them; they are
lowered before the loop, which they cannot depend on, unless an earlier statement of the
run reads the variable they assign) is a row region when fusing pays off:
it has a row reduction or a tile used more than once, which would otherwise be computed
into an [R, N] buffer and read back in a later pass over the whole tile.

The region becomes `for r in range(R)` whose body lowers the statements in row mode
(`LowerContext.row_mode`): each [R, ..] tile is a one-row tile. So row softmax
(`row_max` → `row_expand_sub` → `exp` → `row_sum` → `row_expand_div` → store) runs per row
as a max pass over the loaded row, an exp + sum pass into one row buffer and a
scale + store pass, all within L1. Tiles read from before the region are viewed one row at
a time; tiles the region defines and later code uses are copied row by row into full
buffers (the yield hint's buffer when there is one). A load after a store ends a region:
it might read rows the store has not written yet.
"""

from __future__ import annotations

from ... import ir as pir
from ...ir.enums import AtomicType
from . import lower_elementwise
from .builder import KernelBuilder, TileBuf
from .context import LowerContext, RowMode, tile_dims
from .mlir import arith, ir, memref, scf

ROW_REDUCTIONS = frozenset(f"tile.row_{op}" for op in ("sum", "max", "min", "prod", "argmax", "argmin"))
ROW_LOCAL = (frozenset({"tile.load", "tile.store", "tile.create", "tile.full", "tile.expands", "tile.cast",
                        "tile.lrelu", "tile.cmp", "tile.cmps", "tile.sel", "tile.sels", "tile.row_expand"})
             | {f"tile.{n}" for n in lower_elementwise.BINARY + lower_elementwise.SCALAR_BINARY
                + lower_elementwise.UNARY}
             | {f"tile.row_expand_{op}" for op in lower_elementwise.EXPAND_OPS}
             | ROW_REDUCTIONS)


def _call_of(st: pir.Stmt) -> pir.Call | None:
    v = st.value if isinstance(st, pir.Assign) else st.expr if isinstance(st, pir.Eval) else None
    return v if isinstance(v, pir.Call) and not isinstance(v.op, pir.GlobalVar) else None


def _is_pure_scalar(st: pir.Stmt) -> bool:
    """A scalar assignment computed without any call (it cannot read what a region writes)."""
    return (isinstance(st, pir.Assign) and isinstance(st.var.type, pir.ScalarType)
            and not _has_call(st.value))


def _has_call(node) -> bool:
    if isinstance(node, pir.Call):
        return True
    if isinstance(node, (list, tuple)):
        return any(_has_call(x) for x in node)
    if isinstance(node, pir.Node) and not isinstance(node, (pir.Type, pir.Var)):
        return any(_has_call(v) for _, v in node.fields())
    return False


def _vars_in(st: pir.Stmt) -> set:
    from .lower import uses

    return uses(st.value if isinstance(st, pir.Assign) else st.expr)


def _row_count(st: pir.Stmt) -> int | None:
    """R when `st` is a row-local tile statement whose tiles all have R static rows."""
    call = _call_of(st)
    if call is None or call.op.name not in ROW_LOCAL:
        return None
    if call.op.name == "tile.store" and call.kwargs.get("atomic") not in (None, AtomicType.None_):
        return None
    operands = _operands(call)
    if any(_has_call(a) for a in operands):  # nested calls: not the flat form regions expect
        return None
    types = [a.type for a in operands if isinstance(a, pir.Var) and isinstance(a.type, pir.TileType)]
    if isinstance(call.type, pir.TileType):
        types.append(call.type)
    if isinstance(st, pir.Assign) and isinstance(st.var.type, pir.TileType):
        types.append(st.var.type)
    if not types or any(t.static_shape is None for t in types):
        return None
    rows = {tile_dims(t, "")[0] for t in types}
    return rows.pop() if len(rows) == 1 else None


def _pays_off(stmts: list) -> bool:
    """A row reduction, or a tile defined here and used more than once here."""
    from .lower import count_uses

    counts = count_uses(stmts)
    for st in stmts:
        call = _call_of(st)
        if call is None:
            continue
        if call.op.name in ROW_REDUCTIONS:
            return True
        if isinstance(st, pir.Assign) and isinstance(st.var.type, pir.TileType) and counts.get(st.var, 0) > 1:
            return True
    return False


def row_regions(stmts: list) -> list[tuple[int, int, int]]:
    """(start, stop, rows) of each row region among `stmts` (see the module docstring)."""
    out = []
    i = 0
    while i < len(stmts):
        rows = _row_count(stmts[i])
        if rows is None or rows < 2:
            i += 1
            continue
        j, stored, read = i, False, set()
        while j < len(stmts):
            st = stmts[j]
            if _is_pure_scalar(st):
                if st.var in read:  # hoisting it would change what an earlier statement reads
                    break
            else:
                name = _call_of(st).op.name if _row_count(st) == rows else None
                if name is None or (name == "tile.load" and stored):
                    break
                stored = stored or name == "tile.store"
            read |= _vars_in(st)
            j += 1
        while _is_pure_scalar(stmts[j - 1]):  # trailing scalar assignments stay outside
            j -= 1
        if _pays_off(stmts[i:j]):
            out.append((i, j, rows))
        i = j
    return out


def row_view(kb: KernelBuilder, tile: TileBuf, row: ir.Value) -> TileBuf:
    """Row `row` of a full tile buffer as a one-row tile (valid rows: 1 or 0)."""
    offset = arith.muli(row, kb.idx(tile.pitch))
    buf = memref.subview(tile.buf, [offset], [tile.pitch], [1])
    inside = arith.cmpi(arith.CmpIPredicate.ult, row, tile.valid[0])
    valid = (arith.select(inside, kb.idx(1), kb.idx(0)), tile.valid[1])
    return TileBuf(buf, tile.dtype, 1, tile.cols, tile.pitch, tile.width, valid)


def _operands(call: pir.Call) -> list:
    return list(call.args) + [v for v in call.kwargs.values() if isinstance(v, pir.Expr)]


def _read_before_defined(body: list) -> list[pir.Var]:
    """Tile variables the region reads before (or without) defining them."""
    defined: set = set()
    out: dict = {}
    for st in body:
        for a in _operands(_call_of(st)):
            if isinstance(a, pir.Var) and isinstance(a.type, pir.TileType) and a not in defined:
                out[a] = None
        if isinstance(st, pir.Assign):
            defined.add(st.var)
    return list(out)


def lower_row_region(lc: LowerContext, stmts: list, rows: int, hints: dict) -> None:
    """Lower a row region (`row_regions`) as one loop over its `rows` rows."""
    from .lower import copy_tile, count_uses, lower_stmts

    body = [st for st in stmts if not _is_pure_scalar(st)]
    lower_stmts(lc, [st for st in stmts if _is_pure_scalar(st)], {})
    inside = count_uses(body)
    escaping = {st.var: st for st in body
                if isinstance(st, pir.Assign) and isinstance(st.var.type, pir.TileType)
                and lc.use_counts.get(st.var, 0) > inside.get(st.var, 0)}
    targets = {v: hints.get(st) or lc.new_tile(v.type) for v, st in escaping.items()}
    outside = {v: lc.tile(v) for v in _read_before_defined(body)}
    kb = lc.kb
    loop = scf.ForOp(kb.idx(0), kb.idx(rows), kb.idx(1), [])
    with ir.InsertionPoint(loop.body):
        r = loop.induction_variable
        lc.row_mode = RowMode(r, rows)
        try:
            for v, full in outside.items():
                lc.bind(v, row_view(kb, full, r))
            lower_stmts(lc, body, {}, frozenset(escaping.values()))
            for v, full in targets.items():
                copy_tile(lc, lc.operand(v), row_view(kb, full, r))
        finally:
            lc.row_mode = None
        scf.yield_([])
    for v, full in {**outside, **targets}.items():
        lc.bind(v, full)
