"""`sort32` and `mrgsort`: (value, index bits) pairs in FP32 slots, ordered descending by a
signed-integer key of the value's bits (so every bit pattern has a place: NaN above +inf).

sort32 places each element of a 32-element run at its rank within the run (the number of
elements before it: larger, or equal and earlier). mrgsort merges runs pairwise, each merge
one scalar loop over the output carrying the two read positions; four runs (format 1) or
four values (format 2) merge as (0, 1) and (2, 3) into a scratch row, then into the result.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.ops.sort import RUN
from .builder import KernelBuilder, TileBuf
from .context import LowerContext
from .mlir import arith, ir, memref, scf

_I32 = ir.IntegerType.get_signless


def _key(v: ir.Value) -> ir.Value:
    """An i32 whose signed order is the order of FP32 `v`'s value (bits of negatives flipped)."""
    i32 = _I32(32)
    bits = arith.bitcast(i32, v)
    sign = arith.shrsi(bits, arith.constant(i32, 31))
    return arith.xori(bits, arith.andi(sign, arith.constant(i32, 0x7FFFFFFF)))


@dataclass
class _Run:
    """`n` pairs of `buf` starting at FP32 slot `base` (index Values)."""

    buf: ir.Value
    base: ir.Value
    n: ir.Value


def _slot(kb: KernelBuilder, run: _Run, e: ir.Value, half: int) -> ir.Value:
    return arith.addi(run.base, arith.addi(arith.muli(e, kb.idx(2)), kb.idx(half)))


def _merge(kb: KernelBuilder, a: _Run, b: _Run, dst: ir.Value, base: ir.Value) -> None:
    """Merge sorted runs a and b into dst from slot `base` (ties take a)."""
    zero = kb.idx(0)
    with kb.loop(0, arith.addi(a.n, b.n), 1, [zero, zero]) as lk:
        k = lk.induction_variable
        i, j = lk.inner_iter_args
        a_ok = arith.cmpi(arith.CmpIPredicate.ult, i, a.n)
        b_ok = arith.cmpi(arith.CmpIPredicate.ult, j, b.n)
        ia, jb = arith.select(a_ok, i, zero), arith.select(b_ok, j, zero)  # an empty run reads pair 0
        va = memref.load(a.buf, [arith.select(a_ok, _slot(kb, a, ia, 0), zero)])
        vb = memref.load(b.buf, [arith.select(b_ok, _slot(kb, b, jb, 0), zero)])
        xa = memref.load(a.buf, [arith.select(a_ok, _slot(kb, a, ia, 1), zero)])
        xb = memref.load(b.buf, [arith.select(b_ok, _slot(kb, b, jb, 1), zero)])
        not_b = arith.xori(b_ok, arith.constant(_I32(1), 1))
        take_a = arith.andi(a_ok, arith.ori(not_b, arith.cmpi(arith.CmpIPredicate.sge, _key(va), _key(vb))))
        out = arith.addi(base, arith.muli(k, kb.idx(2)))
        memref.store(arith.select(take_a, va, vb), dst, [out])
        memref.store(arith.select(take_a, xa, xb), dst, [arith.addi(out, kb.idx(1))])
        one = kb.idx(1)
        scf.yield_([arith.select(take_a, arith.addi(i, one), i), arith.select(take_a, j, arith.addi(j, one))])


def _merge_all(kb: KernelBuilder, runs: list[_Run], scratch: ir.Value, scratch_base: ir.Value,
               dst: ir.Value, base: ir.Value) -> None:
    """Merge 2 to 4 consecutive runs into dst at `base`; pairs go through scratch first (at
    scratch_base plus the slots of the runs before them)."""
    while len(runs) > 2:
        merged, offset = [], scratch_base
        for pair in (runs[0:2], runs[2:4]):
            if len(pair) == 1:
                merged.append(pair[0])
                continue
            _merge(kb, pair[0], pair[1], scratch, offset)
            n = arith.addi(pair[0].n, pair[1].n)
            merged.append(_Run(scratch, offset, n))
            offset = arith.addi(offset, arith.muli(n, kb.idx(2)))
        runs = merged
    _merge(kb, runs[0], runs[1], dst, base)


def lower_sort32(lc: LowerContext, short: str, a: dict) -> TileBuf:
    src, idx = lc.tile(a["src"]), lc.tile(a["idx"])
    kb = lc.kb
    out = lc.result_tile()
    with kb.loop(0, src.rows) as lr:
        r = lr.induction_variable
        row, out_row = arith.muli(r, kb.idx(src.pitch)), arith.muli(r, kb.idx(out.pitch))
        with kb.loop(0, src.cols, RUN) as lb:
            first = arith.addi(row, lb.induction_variable)
            with kb.loop(0, RUN) as li:
                i = li.induction_variable
                at = arith.addi(first, i)
                key = _key(memref.load(src.buf, [at]))
                with kb.loop(0, RUN, 1, [kb.idx(0)]) as lk:
                    k = lk.induction_variable
                    other = _key(memref.load(src.buf, [arith.addi(first, k)]))
                    tie = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, other, key),
                                     arith.cmpi(arith.CmpIPredicate.ult, k, i))
                    before = arith.ori(arith.cmpi(arith.CmpIPredicate.sgt, other, key), tie)
                    rank = lk.inner_iter_args[0]
                    scf.yield_([arith.select(before, arith.addi(rank, kb.idx(1)), rank)])
                slot = arith.addi(out_row, arith.muli(arith.addi(lb.induction_variable, lk.results[0]),
                                                      kb.idx(2)))
                memref.store(memref.load(src.buf, [at]), out.buf, [slot])
                bits = arith.bitcast(ir.F32Type.get(), memref.load(idx.buf, [arith.addi(
                    arith.muli(r, kb.idx(idx.pitch)), arith.addi(lb.induction_variable, i))]))
                memref.store(bits, out.buf, [arith.addi(slot, kb.idx(1))])
    return out


def lower_mrgsort(lc: LowerContext, short: str, a: dict) -> TileBuf:
    kb = lc.kb
    out = lc.result_tile()
    scratch = kb.alloc_scratch(ir.F32Type.get(), out.cols)
    if a.get("block_len") is not None:
        _format1(lc, lc.tile(a["src0"]), out, scratch, lc.index(a["block_len"]))
        return out
    srcs = [lc.tile(a[n]) for n in ("src0", "src1", "src2", "src3") if a.get(n) is not None]
    with kb.loop(0, out.rows) as lr:
        r = lr.induction_variable
        runs = [_Run(s.buf, arith.muli(r, kb.idx(s.pitch)), kb.idx(s.cols // 2)) for s in srcs]
        _merge_all(kb, runs, scratch, kb.idx(0), out.buf, arith.muli(r, kb.idx(out.pitch)))
    return out


def _format1(lc: LowerContext, src: TileBuf, out: TileBuf, scratch: ir.Value, block_len: ir.Value) -> None:
    """Every 4 adjacent runs of block_len columns of each row merge into one."""
    kb = lc.kb
    n = kb.idx(src.cols // 2)
    run = arith.maxui(arith.divui(block_len, kb.idx(2)), kb.idx(1))
    with kb.loop(0, src.rows) as lr:
        r = lr.induction_variable
        row, out_row = arith.muli(r, kb.idx(src.pitch)), arith.muli(r, kb.idx(out.pitch))
        with kb.loop(0, n, arith.muli(run, kb.idx(4))) as lg:
            ends = [arith.minui(arith.addi(lg.induction_variable, arith.muli(run, kb.idx(q))), n)
                    for q in range(5)]
            runs = [_Run(src.buf, arith.addi(row, arith.muli(ends[q], kb.idx(2))),
                         arith.subi(ends[q + 1], ends[q])) for q in range(4)]
            start = arith.muli(ends[0], kb.idx(2))
            _merge_all(kb, runs, scratch, start, out.buf, arith.addi(out_row, start))


def register(table: dict) -> None:
    table["tile.sort32"] = lower_sort32
    table["tile.mrgsort"] = lower_mrgsort
