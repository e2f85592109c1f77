"""Row / column reductions (sum, max, min, prod, argmax, argmin) over a tile's valid region.

A row reduction keeps one vector accumulator per row (lanes beyond the valid columns are
replaced by the identity), then folds it with `vector.reduction`. A column reduction keeps
one accumulator per column chunk and walks the valid rows. FP16 / BF16 accumulate in FP32.
Float max / min propagate NaN (like torch); argmax / argmin return the first index of the
extreme value.
"""

from __future__ import annotations

from ...dtypes import INT32, DataType
from .builder import KernelBuilder, TileBuf, compute_dtype, static_index
from .context import LowerContext, unsupported
from .lower_elementwise import compare
from .mlir import arith, ir, memref, scf, vector
from .vector_math import splat
from .vectors import LazyTile, load_chunk, store_chunk, to_compute, to_storage, vtype

_K = vector.CombiningKind


def _identity_and_kind(op: str, d: DataType) -> tuple[float | int, object, object]:
    """(identity, elementwise combine fn, vector.reduction kind) of `op` on compute dtype `d`."""
    if d.is_float:
        return {"sum": (0.0, arith.addf, _K.ADD), "prod": (1.0, arith.mulf, _K.MUL),
                "max": (float("-inf"), arith.maximumf, _K.MAXIMUMF),
                "min": (float("inf"), arith.minimumf, _K.MINIMUMF)}[op]
    bits = d.bits
    if d.signed:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return {"sum": (0, arith.addi, _K.ADD), "prod": (1, arith.muli, _K.MUL),
                "max": (lo, arith.maxsi, _K.MAXSI), "min": (hi, arith.minsi, _K.MINSI)}[op]
    return {"sum": (0, arith.addi, _K.ADD), "prod": (1, arith.muli, _K.MUL),
            "max": (0, arith.maxui, _K.MAXUI), "min": (-1, arith.minui, _K.MINUI)}[op]


def _fold_lanes(acc: ir.Value, kind) -> ir.Value:
    """The lanes of vector accumulator `acc` combined into one scalar as a tree: the lanes
    already hold partial results in no particular order, so float sums and products may be
    reassociated (without that flag LLVM adds the lanes one after another, a chain of as
    many dependent adds as lanes)."""
    is_float = isinstance(acc.type.element_type, ir.FloatType)
    fm = ir.Attribute.parse("#arith.fastmath<reassoc>") if is_float and kind in (_K.ADD, _K.MUL) else None
    return vector.reduction(acc.type.element_type, kind, acc, fastmath=fm)


def _lane_mask(width: int, n: ir.Value) -> ir.Value:
    return vector.create_mask(ir.VectorType.get([width], ir.IntegerType.get_signless(1)), [n])


def _valid_lanes(v: ir.Value, x: TileBuf, c: ir.Value, identity: ir.Value) -> ir.Value:
    """Chunk `v` of `x` at column `c` with lanes past the valid columns set to `identity`
    (no masking when every column up to the pitch is statically valid)."""
    cols = static_index(x.valid[1])
    if cols is not None and cols >= x.pitch:
        return v
    return arith.select(_lane_mask(x.width, arith.subi(x.valid[1], c)), v, identity)


def _reduce_row(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, combine, kind = _identity_and_kind(op, cd)
    vt = vtype(x.width, cd)
    init = splat(vt, ident)
    with kb.loop(0, x.rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(x.pitch))
        with kb.loop(0, x.pitch, x.width, [init]) as lcol:
            c = lcol.induction_variable
            v = to_compute(load_chunk(x, arith.addi(base, c)), x.dtype)
            scf.yield_([combine(lcol.inner_iter_args[0], _valid_lanes(v, x, c, init))])
        s = _fold_lanes(lcol.results[0], kind)
        memref.store(to_storage(s, out.dtype), out.buf, [arith.muli(r, kb.idx(out.pitch))])


def materialize_reducing(kb: KernelBuilder, out: TileBuf, lazy: LazyTile, op: str,
                         red: TileBuf) -> None:
    """Compute `lazy` into `out` and, in the same pass, its row `op` into `red` ([rows, 1])."""
    cd = compute_dtype(out.dtype)
    ident, combine, kind = _identity_and_kind(op, cd)
    vt = vtype(out.width, cd)
    init = splat(vt, ident)
    with kb.loop(0, out.rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(out.pitch))
        with kb.loop(0, out.pitch, out.width, [init]) as lcol:
            c = lcol.induction_variable
            v = lazy.chunk(r, c)
            store_chunk(out, arith.addi(base, c), v)
            v = _valid_lanes(to_compute(v, out.dtype), out, c, init)
            scf.yield_([combine(lcol.inner_iter_args[0], v)])
        s = _fold_lanes(lcol.results[0], kind)
        memref.store(to_storage(s, red.dtype), red.buf, [arith.muli(r, kb.idx(red.pitch))])


FUSIBLE_ROW_REDUCTIONS = ("tile.row_sum", "tile.row_max", "tile.row_min", "tile.row_prod")


def _reduce_col(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, combine, _ = _identity_and_kind(op, cd)
    vt = vtype(x.width, cd)
    init = splat(vt, ident)
    with kb.loop(0, x.pitch, x.width) as lcol:
        c = lcol.induction_variable
        with kb.loop(0, x.valid[0], 1, [init]) as lr:
            off = arith.addi(arith.muli(lr.induction_variable, kb.idx(x.pitch)), c)
            v = to_compute(load_chunk(x, off), x.dtype)
            scf.yield_([combine(lr.inner_iter_args[0], v)])
        vector.store(to_storage(lr.results[0], out.dtype), out.buf, [c])


def _arg_row(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    """Row argmax / argmin: per-lane best value and index, then a cross-lane fold."""
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, combine, kind = _identity_and_kind("max" if op == "argmax" else "min", cd)
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
            v = _valid_lanes(to_compute(load_chunk(x, arith.addi(base, c)), x.dtype), x, c, init)
            idx = arith.addi(iota, vector.broadcast(it, arith.index_cast(ir.IntegerType.get_signless(32), c)))
            take = compare(v, best, cd, better)
            scf.yield_([arith.select(take, v, best), arith.select(take, idx, best_i)])
        best, best_i = lcol.results
        m = vector.reduction(vt.element_type, kind, best)
        hit = compare(best, vector.broadcast(vt, m), cd, "eq")
        first = vector.reduction(ir.IntegerType.get_signless(32), _K.MINSI,
                                 arith.select(hit, best_i, splat(it, 2**31 - 1)))
        memref.store(first, out.buf, [arith.muli(r, kb.idx(out.pitch))])


def _arg_col(lc: LowerContext, x: TileBuf, out: TileBuf, op: str) -> None:
    """Column argmax / argmin: walk the valid rows keeping the best value and its row."""
    kb = lc.kb
    cd = compute_dtype(x.dtype)
    ident, _, _ = _identity_and_kind("max" if op == "argmax" else "min", cd)
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
        _reduce_row(lc, x, out, op)
    else:
        _reduce_col(lc, x, out, op)
    return out


def register(table: dict) -> None:
    for direction in ("row", "col"):
        for op in ("sum", "max", "min", "prod", "argmax", "argmin"):
            table[f"tile.{direction}_{op}"] = lower_reduction
