"""Row / column reductions (sum, max, min, prod, argmax, argmin) over a tile's valid region.

A row reduction keeps one vector accumulator per row (lanes beyond the valid columns are
replaced by the identity), then folds it with `vector.reduction`. A column reduction keeps
one accumulator per column chunk and walks the valid rows in order, or, given a scratch
tile, combines them as a binary tree; a column reduction rounds every partial result to
the storage dtype. Row reductions of FP16 / BF16 accumulate in FP32.
Float max / min propagate NaN (like torch); argmax / argmin return the first index of the
extreme value.
"""

from __future__ import annotations

from ...dtypes import INT32
from .builder import TileBuf, compute_dtype
from .context import LowerContext, unsupported
from .mlir import arith, ir, memref, scf, vector
from .reductions import identity_and_kind, reduce_rows, valid_lanes
from .vector_math import compare, splat
from .vectors import load_chunk, to_compute, to_storage, vtype


def _rounded(v: ir.Value, dtype) -> ir.Value:
    """`v` rounded to storage dtype `dtype` and widened back (a no-op for 32-bit types)."""
    return to_compute(to_storage(v, dtype), dtype)


def _reduce_col(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    """Sequential order: row after row into one accumulator per column chunk, rounded to
    the storage dtype after every step (the vector unit adds in that dtype)."""
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, combine, _ = identity_and_kind(op, cd)
    init = splat(vtype(x.width, cd), ident)
    with kb.loop(0, x.pitch, x.width) as lcol:
        c = lcol.induction_variable
        with kb.loop(0, x.valid[0], 1, [init]) as lr:
            off = arith.addi(arith.muli(lr.induction_variable, kb.idx(x.pitch)), c)
            v = to_compute(load_chunk(x, off), x.dtype)
            scf.yield_([_rounded(combine(lr.inner_iter_args[0], v), x.dtype)])
        vector.store(to_storage(lr.results[0], out.dtype), out.buf, [c])


def _reduce_col_tree(lc: LowerContext, x: TileBuf, tmp: TileBuf, out: TileBuf, op: str) -> None:
    """Binary-tree order (a scratch tile given): each level combines rows 2i and 2i+1 into
    scratch row i, an odd last row folding into row 0, until one row is left; every
    partial result is stored (so rounded) in the storage dtype."""
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, combine, _ = identity_and_kind(op, cd)
    levels = max(1, (x.rows - 1).bit_length())
    one, two = kb.idx(1), kb.idx(2)
    with kb.loop(0, x.pitch, x.width) as lcol:
        c = lcol.induction_variable

        def chunk(t: TileBuf, row: ir.Value) -> ir.Value:
            off = arith.addi(arith.muli(row, kb.idx(t.pitch)), c)
            return to_compute(vector.load(vtype(x.width, x.dtype), t.buf, [off]), x.dtype)

        def put(row: ir.Value, v: ir.Value) -> None:
            off = arith.addi(arith.muli(row, kb.idx(tmp.pitch)), c)
            vector.store(to_storage(v, x.dtype), tmp.buf, [off])

        zero = kb.idx(0)
        cnt = x.valid[0]
        for level in range(levels):
            src = x if level == 0 else tmp
            half = arith.divui(cnt, two)
            with kb.loop(0, half) as lp:
                i2 = arith.muli(lp.induction_variable, two)
                put(lp.induction_variable, combine(chunk(src, i2), chunk(src, arith.addi(i2, one))))
            odd = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(cnt, two), one)
            fold = scf.IfOp(odd)
            with ir.InsertionPoint(fold.then_block):
                last = chunk(src, arith.subi(cnt, one))
                paired = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, half, zero), has_else=True)
                with ir.InsertionPoint(paired.then_block):
                    put(zero, combine(chunk(tmp, zero), last))
                    scf.yield_([])
                with ir.InsertionPoint(paired.else_block):
                    put(zero, last)
                    scf.yield_([])
                scf.yield_([])
            cnt = half
        some = arith.cmpi(arith.CmpIPredicate.ugt, x.valid[0], zero)
        result = arith.select(some, chunk(tmp, zero), splat(vtype(x.width, cd), ident))
        vector.store(to_storage(result, out.dtype), out.buf, [c])


def _arg_row(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    """Row argmax / argmin: per-lane best value and index, then a cross-lane fold."""
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, combine, kind = identity_and_kind("max" if op == "argmax" else "min", cd)
    vt = vtype(x.width, cd)
    it = ir.VectorType.get([x.width], ir.IntegerType.get_signless(32))
    init = splat(vt, ident)
    iota = arith.index_cast(it, vector.step(ir.VectorType.get([x.width], ir.IndexType.get())))
    better = "gt" if op == "argmax" else "lt"
    with kb.loop(0, x.rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(x.pitch))
        with kb.loop(0, x.pitch, x.width, [init, splat(it, 0)]) as lcol:
            c = lcol.induction_variable
            best, best_i = lcol.inner_iter_args
            v = valid_lanes(to_compute(load_chunk(x, arith.addi(base, c)), x.dtype), x, c, init)
            idx = arith.addi(iota, vector.broadcast(it, arith.index_cast(ir.IntegerType.get_signless(32), c)))
            take = compare(v, best, cd, better)
            scf.yield_([arith.select(take, v, best), arith.select(take, idx, best_i)])
        best, best_i = lcol.results
        m = vector.reduction(vt.element_type, kind, best)
        hit = compare(best, vector.broadcast(vt, m), cd, "eq")
        first = vector.reduction(ir.IntegerType.get_signless(32), vector.CombiningKind.MINSI,
                                 arith.select(hit, best_i, splat(it, 2**31 - 1)))
        memref.store(first, out.buf, [arith.muli(r, kb.idx(out.pitch))])


def _arg_col(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    """Column argmax / argmin: walk the valid rows keeping the best value and its row."""
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, _, _ = identity_and_kind("max" if op == "argmax" else "min", cd)
    vt = vtype(x.width, cd)
    i32 = ir.IntegerType.get_signless(32)
    it = ir.VectorType.get([x.width], i32)
    better = "gt" if op == "argmax" else "lt"
    with kb.loop(0, x.pitch, x.width) as lcol:
        c = lcol.induction_variable
        with kb.loop(0, x.valid[0], 1, [splat(vt, ident), splat(it, 0)]) as lr:
            r = lr.induction_variable
            best, best_i = lr.inner_iter_args
            v = to_compute(load_chunk(x, arith.addi(arith.muli(r, kb.idx(x.pitch)), c)), x.dtype)
            take = compare(v, best, cd, better)
            row = vector.broadcast(it, arith.index_cast(i32, r))
            scf.yield_([arith.select(take, v, best), arith.select(take, row, best_i)])
        vector.store(lr.results[1], out.buf, [c])


def lower_reduction(lc: LowerContext, short: str, a: dict) -> TileBuf:
    direction, _, op = short.partition("_")
    x = lc.tile(a["input"])
    if x.dtype not in (INT32,) and not (x.dtype.is_float or x.dtype.is_int):
        raise unsupported(lc.where(f"tile.{short}"), x.dtype)
    out = lc.result_tile()
    if op in ("argmax", "argmin"):
        (_arg_row if direction == "row" else _arg_col)(lc, x, out, op)
    elif direction == "row":
        reduce_rows(lc.kb, x, op, out)
    elif a.get("tmp_tile") is not None:
        _reduce_col_tree(lc, x, lc.tile(a["tmp_tile"]), out, op)
    else:
        _reduce_col(lc, x, out, op)
    return out


def register(table: dict) -> None:
    for direction in ("row", "col"):
        for op in ("sum", "max", "min", "prod", "argmax", "argmin"):
            table[f"tile.{direction}_{op}"] = lower_reduction
