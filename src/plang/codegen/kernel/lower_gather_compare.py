"""The compare form of gather: `gather_compare` (per row, the column indices + offset of the
first out_cols valid elements matching `x <cmp_mode> kvalue`, 0 after the last) and
`gather_count` (how many it writes per row, into a [1, rows] row). Each row is one scalar
scan carrying the match count; an index is stored only while the count is below out_cols."""

from __future__ import annotations

from typing import Callable

from ...dtypes import INDEX
from .builder import TileBuf, mlir_type
from .context import LowerContext
from .lower_scalar import convert
from .mlir import arith, ir, memref, scf
from .vector_math import cmp_name, compare, splat
from .vectors import load_elem, store_chunk, to_compute, vtype


def _zero(lc: LowerContext, out: TileBuf) -> None:
    kb = lc.kb
    zero = splat(vtype(out.width, out.dtype), 0)
    with kb.loop(0, out.rows) as lr:
        base = arith.muli(lr.induction_variable, kb.idx(out.pitch))
        with kb.loop(0, out.pitch, out.width) as lcol:
            store_chunk(out, arith.addi(base, lcol.induction_variable), zero)


def _scan(lc: LowerContext, a: dict, on_match: Callable | None, on_row: Callable | None) -> None:
    """Per valid row r: count the matches (up to out_cols), calling `on_match(r, j, n)` for the
    n-th match at column j and `on_row(r, count)` after the row."""
    src = lc.tile(a["input"])
    kb = lc.kb
    name = cmp_name(a["cmp_mode"])
    kv = lc.scalar(a["kvalue"], src.dtype)
    limit = kb.idx(a["out_cols"])
    rows, cols = src.valid
    with kb.loop(0, rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(src.pitch))
        with kb.loop(0, cols, 1, [kb.idx(0)]) as lj:
            j, n = lj.induction_variable, lj.inner_iter_args[0]
            v = to_compute(load_elem(src, arith.addi(base, j)), src.dtype)
            take = arith.andi(compare(v, kv, src.dtype, name), arith.cmpi(arith.CmpIPredicate.ult, n, limit))
            if on_match is not None:
                branch = scf.IfOp(take, [], has_else=False)
                with ir.InsertionPoint(branch.then_block):
                    on_match(r, j, n)
                    scf.yield_([])
            scf.yield_([arith.select(take, arith.addi(n, kb.idx(1)), n)])
        if on_row is not None:
            on_row(r, lj.results[0])


def lower_gather_compare(lc: LowerContext, short: str, a: dict) -> TileBuf:
    out = lc.result_tile()
    _zero(lc, out)
    kb = lc.kb
    offset = kb.idx(a.get("offset") or 0)
    i32 = mlir_type(out.dtype)

    def store(r: ir.Value, j: ir.Value, n: ir.Value) -> None:
        memref.store(arith.index_cast(i32, arith.addi(j, offset)), out.buf,
                     [arith.addi(arith.muli(r, kb.idx(out.pitch)), n)])
    _scan(lc, a, store, None)
    return out


def lower_gather_count(lc: LowerContext, short: str, a: dict) -> TileBuf:
    out = lc.result_tile()
    _zero(lc, out)

    def store(r: ir.Value, count: ir.Value) -> None:
        memref.store(convert(count, INDEX, out.dtype), out.buf, [r])
    _scan(lc, a, None, store)
    return out


def register(table: dict) -> None:
    table["tile.gather_compare"] = lower_gather_compare
    table["tile.gather_count"] = lower_gather_count
