"""Vector reduction building blocks: identities and combiners, lane folds, valid-lane masks,
and the single-pass form that computes a lazy tile into a buffer while reducing its rows."""

from __future__ import annotations

from ...dtypes import DataType
from .builder import KernelBuilder, TileBuf, compute_dtype, static_index
from .mlir import arith, ir, memref, scf, vector
from .vector_math import splat
from .vectors import LazyTile, load_chunk, store_chunk, to_compute, to_storage, vtype

_K = vector.CombiningKind
_NUM_KIND = {_K.MAXIMUMF: _K.MAXNUMF, _K.MINIMUMF: _K.MINNUMF}


def identity_and_kind(op: str, d: DataType) -> tuple[float | int, object, object]:
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


def fold_lanes(acc: ir.Value, kind, nan_free: bool = False) -> ir.Value:
    """The lanes of vector accumulator `acc` combined into one scalar as a tree: the lanes
    already hold partial results in no particular order, so float sums and products may be
    reassociated (without that flag LLVM adds the lanes one after another, a chain of as
    many dependent adds as lanes). `nan_free`: a float max / min whose NaN lanes the caller
    notes apart, folded with plain compares (LLVM otherwise expands its NaN care lane by
    lane)."""
    is_float = isinstance(acc.type.element_type, ir.FloatType)
    fm = None
    if is_float and kind in (_K.ADD, _K.MUL):
        fm = ir.Attribute.parse("#arith.fastmath<reassoc>")
    elif is_float and nan_free:
        kind, fm = _NUM_KIND.get(kind, kind), ir.Attribute.parse("#arith.fastmath<nnan,nsz>")
    return vector.reduction(acc.type.element_type, kind, acc, fastmath=fm)


def lane_mask(width: int, n: ir.Value) -> ir.Value:
    return vector.create_mask(ir.VectorType.get([width], ir.IntegerType.get_signless(1)), [n])


def valid_lanes(v: ir.Value, x: TileBuf, c: ir.Value, identity: ir.Value) -> ir.Value:
    """Chunk `v` of `x` at column `c` with lanes past the valid columns set to `identity`
    (no masking when every column up to the pitch is statically valid)."""
    cols = static_index(x.valid[1])
    if cols is not None and cols >= x.pitch:
        return v
    return arith.select(lane_mask(x.width, arith.subi(x.valid[1], c)), v, identity)


def reduce_rows(kb: KernelBuilder, x: TileBuf, op: str, red: TileBuf, lazy: LazyTile | None = None,
                keep: bool = True, values: LazyTile | None = None) -> None:
    """Row `op` of tile `x` into `red` ([rows, 1]). With `lazy`, the values come from it and
    are stored into `x` in the same pass (a producer and its row reduction in one sweep;
    not stored unless `keep`: nothing else reads them); with `values` too, what is reduced
    is `values`, an op of `x` read back from the chunk just stored (of `x`'s dtype).
    A float max / min keeps one compare + select per chunk (`vmaxps`) and notes NaN lanes
    beside it: `maximumf`'s own NaN and signed-zero care costs 4-5 ops per chunk at
    x86-64-v3 (the row maximum of [-0, +0] may be either zero, as torch's and numpy's are)."""
    cd = compute_dtype(x.dtype)
    ident, combine, kind = identity_and_kind(op, cd)
    init = splat(vtype(x.width, cd), ident)
    ordered = cd.is_float and op in ("max", "min")
    flags = ir.VectorType.get([x.width], ir.IntegerType.get_signless(32))  # lane masks: no packing
    carried = [init, splat(flags, 0)] if ordered else [init]
    wins = arith.CmpFPredicate.OGT if op == "max" else arith.CmpFPredicate.OLT
    # two chunks a trip where the row holds an even number: a producer's two chains (exp's
    # ~20 dependent ops each) overlap, which successive trips barely do on a Zen 1 core
    # (8x512x512x64 fp32 attention on one, in-process A/B: 18.56 -> 18.2 ms; row softmax and
    # the norms unchanged)
    step = 2 if x.pitch % (2 * x.width) == 0 else 1
    with kb.loop(0, x.rows) as lr:
        r = lr.induction_variable
        base = arith.muli(r, kb.idx(x.pitch))
        with kb.loop(0, x.pitch, step * x.width, carried) as lcol:
            carry = list(lcol.inner_iter_args)
            for u in range(step):
                c = arith.addi(lcol.induction_variable, kb.idx(u * x.width)) if u else lcol.induction_variable
                if lazy is None:
                    v = load_chunk(x, arith.addi(base, c))
                else:
                    v = lazy.chunk(r, c)
                    if keep:
                        store_chunk(x, arith.addi(base, c), v)
                    if values is not None:
                        v = values.chunk(r, c)
                v = valid_lanes(to_compute(v, x.dtype), x, c, init)
                if ordered:
                    nan = arith.extsi(flags, arith.cmpf(arith.CmpFPredicate.UNO, v, v))
                    carry = [arith.select(arith.cmpf(wins, v, carry[0]), v, carry[0]),
                             arith.ori(carry[1], nan)]
                else:
                    carry = [combine(carry[0], v)]
            scf.yield_(carry)
        s = fold_lanes(lcol.results[0], kind, nan_free=ordered)
        if ordered:
            seen = vector.reduction(flags.element_type, _K.OR, lcol.results[1])
            any_nan = arith.cmpi(arith.CmpIPredicate.ne, seen, kb.const_of(seen.type, 0))
            s = arith.select(any_nan, kb.const_of(s.type, float("nan")), s)
        memref.store(to_storage(s, red.dtype), red.buf, [arith.muli(r, kb.idx(red.pitch))])
