"""The matmul family (`matmul`, `matmul_acc`, `matmul_bias`, `gemv*`) as a register-blocked
vector micro-kernel.

C[M, N] (FP32, or INT32 for INT8 operands) is computed in blocks of MR rows × NR columns
whose MR × NR/16 accumulators stay in vector registers through the whole k loop: per k,
NR/16 vectors of B's row k are loaded and each of the MR A elements is broadcast and
fused-multiply-added into its row's accumulators.

B is packed once per call into contiguous NR-column panels (so a block streams its panel
linearly), reading B's chunks straight from DDR when B is a deferred `tile.load` (no tile
copy):

* FP32: packed as is (prefetching rows ahead: `vectors.prefetch_ahead`), except that a B
  already in a tile buffer is read in place. When B's chunks are the panels, the first row
  block of each panel packs it as it computes (no separate packing pass: 512x256x256 with B
  in L2, +7%), where the panels are 64 columns or wider (`FP32_INLINE_PANEL`).
* BF16 where the target has the pair dot product (`isa.bf16_dot`, AVX512-BF16): packed
  pair-interleaved along k, two k steps per instruction, FP32 accumulation, always in a
  pass of its own, which reads B's rows whole (a first row block packing its panel reads
  two 128-byte pieces a row pitch apart per step, waiting on each page: 8x512x512x64
  attention on a Zen 5 VM 1.16 -> 1.05 ms, a 1024^3 GEMM no slower); elsewhere as FP16.
  Where the target also has AMX tiles (`isa.amx_bf16`) and A is whole 16 × 32 tiles, the
  same panels feed `lower_matmul_amx` instead of the vector micro-kernel.
* FP16 / INT8 (and BF16 with an odd k extent): packed converted to FP32 / INT32; A is
  converted once into a scratch buffer.

Where the same B tiles come back in a loop (the row strips of a GEMM), each is packed once
per call into the call's `pack_cache.PanelCache` and read from there, the first block of a
panel prefetching the next one (1024^3 fp32 at x86-64-v3: 0.84 -> 0.96 of OpenBLAS). A B
that is the fused transpose of a 32-bit DDR load (`lower_layout.lower_transpose`) is packed
the same way, with no transposed copy per use: from 16 x 16 blocks of the loaded tile
transposed in registers (`_pack_transposed`) where it is whole such blocks, else packed
inline by gathers down its columns (1024^3 fp32 on a Sapphire Rapids VM: 18.4 -> 14.3 ms;
row-major 14.8). On AMD the gathers are slow: 1024^3 against row-major B in one process,
a Zen 1 core (x86-64-v3) gathers 1.08x its time, block transposes 0.98x (two blocks: 1.16x,
1.03x); two Zen 4 cores (x86-64-v4) 13.4 ms with gathers, 10.8-11.5 with block transposes
(row-major 10.3-10.7, torch 10.9-11.4).

A is read where it lies when it is a fused 2-D DDR load whose whole tile is inside the
tensor and the micro-kernel broadcasts its elements as they are (FP32, BF16 pairs): no tile
copy (1024^3 GEMM on one Zen 5 core, in-process A/B: BF16 5.74 -> 5.57 ms, FP32 14.9 -> 14.6).
Any other A (a clipped or clamped load, FP16 / INT8 converted first, AMX tiles) is copied.

The block shape MR × NR comes from the target (`isa.matmul_block`: 6 × 64 with 32 zmm
registers, 6 × 16 with 16 ymm). Rows past the last whole block share two even blocks with
that block's rows (32 rows at 6 × 16: 6, 6, 6, 6, 4, 4, not 6 × 5 and 2): the four ymm
accumulators of a 2-row block cannot cover the FMA latency. It ran at 71% of the FMA peak
in 8x512x512x64 fp32 attention (qr=32) on a Zen 1 core; one block, in-process A/B: 18.8 ->
18.5 ms.

`Init` says where the accumulators start: zero, the bias row, or the incoming accumulator
tile (`init_cond` of matmul_acc / gemv_acc selecting zero instead at run time).
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import ir as pir
from ...dtypes import BF16, BOOL, FP16, FP32, INT8, INT32, DataType
from . import isa, lower_matmul_amx
from .builder import KernelBuilder, TileBuf, mlir_type
from .context import LowerContext, unsupported
from .lower_scalar import convert, lower_scalar
from .mlir import arith, ir, memref, scf, vector
from .pack_cache import PanelCache, repeats
from .vector_math import splat
from .vectors import LazyTile, materialize, prefetch_ahead, read_chunk, transpose16

LANES = 16
FP32_INLINE_PANEL = 64
"""The narrowest FP32 panel packed inline. A narrower one reads each B row from DDR in short
pieces, a row pitch apart, panel after panel: 16-column panels (AVX2) took the 1024^3 matmul
from 0.90 to 0.55-0.6 of OpenBLAS; the separate pass reads whole rows."""
_ACC = {FP32: FP32, FP16: FP32, BF16: FP32, INT8: INT32}


def _vt(elem: ir.Type, n: int = LANES) -> ir.VectorType:
    return ir.VectorType.get([n], elem)


@dataclass
class Init:
    """Where a matmul's accumulators start: zero, the `bias` row, or the `acc` tile (zero
    instead where the run-time condition `fresh` holds)."""

    bias: TileBuf | None = None
    acc: TileBuf | None = None
    fresh: ir.Value | None = None

    def vector(self, kb: KernelBuilder, vt: ir.VectorType, r: ir.Value, c: ir.Value) -> ir.Value:
        """The 16 starting accumulators at row r, columns c.. ."""
        if self.bias is not None:
            return vector.load(vt, self.bias.buf, [c])
        if self.acc is None:
            return splat(vt, 0)
        old = vector.load(vt, self.acc.buf, [arith.addi(arith.muli(r, kb.idx(self.acc.pitch)), c)])
        return old if self.fresh is None else arith.select(self.fresh, splat(vt, 0), old)


class _Operands:
    """How the micro-kernel reads A and B for one operand dtype.

    B is read from `b_buf` at `n0 * panel + k * row + lane` for the block at column `n0`:
    FP32 B already in a tile buffer is read in place (panel 1, row = pitch); otherwise B's
    chunks — straight from DDR when B is a deferred load — are packed once per call into
    contiguous column panels of `nr` lanes (panel K, row nr), converted to the accumulator
    type, or for BF16 interleaved in k pairs."""

    def __init__(self, kb: KernelBuilder, a: TileBuf | LazyTile, b: TileBuf | LazyTile, acc_elem: ir.Type,
                 out_pitch: int, nr: int) -> None:
        self.kb, self.b, self.acc_elem, self.nr = kb, b, acc_elem, nr
        self.dot = isa.current().bf16_dot and a.dtype is BF16 and a.cols % 2 == 0 and a.pitch % 2 == 0 \
            and b.width == nr
        self.amx = self.dot and isa.current().amx_bf16 and lower_matmul_amx.fits(a)
        self.is_int = a.dtype is INT8
        self.K = a.cols
        self.a_at: tuple[ir.Value, ir.Value] | None = None
        self.a = a = self._place_a(a)
        # FP32 B is packed by the first row block of each panel as it computes (its B reads
        # overlap the FMAs) when the panels are the B chunks themselves, FP32_INLINE_PANEL
        # columns or wider, unless B is a transpose that block transposes can pack
        self.pack_inline = (a.dtype is FP32 and isinstance(b, LazyTile) and b.width == nr >= FP32_INLINE_PANEL
                            and b.pitch == out_pitch and b.transpose_of is None)
        # B = the transpose of a DDR load, packed from that load's words by block transposes
        # (a BF16 load's words are k pairs: for the pair dot only)
        src = b.transpose_of if isinstance(b, LazyTile) else None
        self.transpose_of = src if src is not None and (self.dot or src.dtype is FP32) else None
        if self.a_at is None:
            self.a_buf = a.buf if a.dtype is FP32 or self.dot else self._convert_a()
        self.base, self.fresh, self.mark = kb.idx(0), None, None
        if a.dtype is FP32 and isinstance(b, TileBuf):
            self.b_buf, self.panel, self.row = b.buf, 1, b.pitch
            return
        self.panel, self.row = self.K, b.width if self.dot or self.pack_inline else nr
        self.b_elem = mlir_type(b.dtype) if self.dot else acc_elem  # what packed B holds
        self.b_buf = kb.alloc_scratch(self.b_elem, self.K * b.pitch)
        self._use_cache(b)
        if not self.pack_inline:
            if self.fresh is None:
                self._pack_b(b)
            else:
                with ir.InsertionPoint(scf.IfOp(self.fresh).then_block):
                    self._pack_b(b)
                    self.mark()
                    scf.yield_([])

    def _place_a(self, a: TileBuf | LazyTile) -> TileBuf:
        """A's tile buffer. A DDR load that the micro-kernel broadcasts from as it is (FP32, or
        BF16 pairs) is read in place where its whole tile lies inside the tensor: `a_buf` is
        then the tensor, `a_at` the tile's first (row, column) in it, and the buffer is filled
        only where it does not."""
        if not isinstance(a, LazyTile):
            return a
        kb, place = self.kb, a.in_place
        buf = kb.alloc_tile(a.dtype, a.rows, a.cols, a.valid)
        if place is None or self.amx or not (a.dtype is FP32 or self.dot):
            materialize(kb, buf, a)
            return buf
        clipped = arith.xori(place.whole, arith.constant(place.whole.type, 1))
        with ir.InsertionPoint(scf.IfOp(clipped).then_block):
            materialize(kb, buf, a)
            scf.yield_([])
        copy = memref.cast(place.memref.type, lower_matmul_amx.as_matrix(buf.buf, buf.pitch))
        self.a_buf = arith.select(place.whole, place.memref, copy)
        self.a_at = tuple(arith.select(place.whole, v, kb.idx(0)) for v in (place.row, place.col))
        return buf

    def _a_index(self, row: ir.Value, k: ir.Value) -> list[ir.Value]:
        """Where `a_buf` holds A[row, k]."""
        if self.a_at is None:
            return [arith.addi(arith.muli(row, self.kb.idx(self.a.pitch)), k)]
        return [arith.addi(self.a_at[0], row), arith.addi(self.a_at[1], k)]

    def _use_cache(self, b: TileBuf | LazyTile) -> None:
        """Packs into a slot of the call's `PanelCache` for B's tensor where the same B tiles
        come back in a loop: `b_buf` / `base` address the slot (or the scratch buffer, off
        the tile grid), `fresh` says whether to pack, `mark()` records it packed."""
        origin = b.origin if isinstance(b, LazyTile) else None
        kb, size = self.kb, self.K * b.pitch
        nbytes = (b.dtype if self.dot else _ACC[b.dtype]).itemsize
        if origin is None or not PanelCache.fits(origin, nbytes, size) or not repeats(kb, origin.offsets):
            return
        elem = self.b_elem
        key = (origin.key, origin.tile, self.nr, self.dot, str(elem))
        if key not in kb.caches:
            kb.caches[key] = PanelCache(kb, origin, elem, size)
        cache = kb.caches[key]
        ok, index, packed = cache.slot(origin.offsets)
        dyn = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], elem)
        self.b_buf = arith.select(ok, memref.cast(dyn, cache.buf), memref.cast(dyn, self.b_buf))
        self.base = arith.muli(index, kb.idx(size))
        self.fresh = arith.xori(packed, arith.constant(packed.type, 1))
        self.mark = lambda: cache.mark(ok, index)

    def _convert_a(self) -> ir.Value:
        """A converted to the accumulator type once (vector conversions), so the k loop
        broadcasts plain loads instead of converting one element per block and k."""
        kb, a = self.kb, self.a
        buf = kb.alloc_scratch(self.acc_elem, a.rows * a.pitch)
        with kb.loop(0, a.rows * a.pitch, a.width) as lc:
            i = lc.induction_variable
            v = vector.load(_vt(a.buf.type.element_type, a.width), a.buf, [i])
            wide = _vt(self.acc_elem, a.width)
            vector.store(arith.extsi(wide, v) if self.is_int else isa.extf(wide, v), buf, [i])
        return buf

    def _pack_b(self, b: TileBuf | LazyTile) -> None:
        """Packs B into `b_buf`'s panels `nr` columns wide (a B chunk of width w fills w / nr
        panels)."""
        kb, w, nr, elem = self.kb, b.width, self.nr, self.b_elem
        if self.transpose_of is not None:
            self._pack_transposed(self.transpose_of)
            return
        with kb.loop(0, self.K // 2 if self.dot else self.K) as lk:
            k = lk.induction_variable
            with kb.loop(0, b.pitch, w) as ln:
                c = ln.induction_variable
                base = arith.addi(self.base, arith.muli(c, kb.idx(self.K)))
                if self.dot:  # Bp[kp, n, 0..1] = (B[2kp, n], B[2kp+1, n]): one load per dot
                    k0 = arith.muli(k, kb.idx(2))
                    v = vector.interleave(read_chunk(kb, b, k0, c),
                                          read_chunk(kb, b, arith.addi(k0, kb.idx(1)), c))
                    vector.store(v, self.b_buf, [arith.addi(base, arith.muli(k, kb.idx(2 * w)))])
                else:
                    v = read_chunk(kb, b, k, c)
                    prefetch_ahead(kb, b, k, c)
                    if self.is_int:
                        v = arith.extsi(_vt(elem, w), v)
                    elif b.dtype is not FP32:
                        v = isa.extf(_vt(elem, w), v)
                    for j in range(0, w, nr):  # one panel per nr columns of the chunk
                        part = v if nr == w else vector.extract_strided_slice(_vt(elem, nr), v, [j], [nr],
                                                                              [1])
                        off = arith.addi(arith.addi(base, kb.idx(j * self.K)), arith.muli(k, kb.idx(nr)))
                        vector.store(part, self.b_buf, [off])

    def _pack_transposed(self, src: LazyTile) -> None:
        """Packs B = src^T from 16 x 16 blocks of src's 32-bit words transposed in registers
        into 16 panel rows (no transposed copy of src, no gathers). A word is an FP32 element,
        or for the pair dot a k pair (B[2kp, n], B[2kp+1, n]): the word kp of src's row n."""
        kb, w, per_word = self.kb, self.row, 2 if self.dot else 1
        i32 = ir.IntegerType.get_signless(32)
        words = src.width // per_word
        with kb.loop(0, src.rows, 16) as ln, kb.loop(0, src.cols, src.width) as lw:
            n0, c = ln.induction_variable, lw.induction_variable
            chunks = [read_chunk(kb, src, arith.addi(n0, kb.idx(r)), c) for r in range(16)]
            if self.dot:
                chunks = [vector.bitcast(_vt(i32, words), v) for v in chunks]
            panel = arith.addi(self.base, arith.muli(arith.divui(n0, kb.idx(w)), kb.idx(w * self.K)))
            at = arith.addi(panel, arith.addi(arith.muli(arith.remui(n0, kb.idx(w)), kb.idx(per_word)),
                                              arith.muli(c, kb.idx(w))))
            for h in range(0, words, 16):
                block = [vector.extract_strided_slice(_vt(v.type.element_type), v, [h], [LANES], [1])
                         for v in chunks]
                for j, v in enumerate(transpose16(block)):
                    if self.dot:
                        v = vector.bitcast(_vt(self.b_elem, 2 * LANES), v)
                    vector.store(v, self.b_buf, [arith.addi(at, kb.idx((h + j) * per_word * w))])

    def a_elem(self, row: ir.Value, k: ir.Value) -> ir.Value:
        """A[row, k] broadcast to a vector of accumulator lanes (converted)."""
        return vector.broadcast(_vt(self.acc_elem), memref.load(self.a_buf, self._a_index(row, k)))

    def a_pair(self, row: ir.Value, kp: ir.Value) -> ir.Value:
        """(A[row, 2kp], A[row, 2kp+1]) broadcast as 16 bf16 pairs."""
        elem = self.a.buf.type.element_type
        two = vector.load(_vt(elem, 2), self.a_buf, self._a_index(row, arith.muli(kp, self.kb.idx(2))))
        i32 = ir.IntegerType.get_signless(32)
        word = vector.extract(vector.bitcast(_vt(i32, 1), two), [], [0])
        return vector.bitcast(_vt(elem, 2 * LANES), vector.broadcast(_vt(i32), word))

    def _b_offset(self, k: ir.Value, n0: ir.Value, lane: int, pairs: int) -> ir.Value:
        kb = self.kb
        off = arith.addi(arith.muli(n0, kb.idx(self.panel)), arith.muli(k, kb.idx(pairs * self.row)))
        return arith.addi(arith.addi(self.base, off), kb.idx(pairs * lane))

    def b_row(self, k: ir.Value, n0: ir.Value, lane: int) -> ir.Value:
        """B[k, n0 + lane : n0 + lane + 16]."""
        return vector.load(_vt(self.acc_elem), self.b_buf, [self._b_offset(k, n0, lane, 1)])

    def b_pair_row(self, kp: ir.Value, n0: ir.Value, lane: int) -> ir.Value:
        """The 16 (B[2kp, n], B[2kp+1, n]) pairs from column n0 + lane on."""
        vt = _vt(self.b_buf.type.element_type, 2 * LANES)
        return vector.load(vt, self.b_buf, [self._b_offset(kp, n0, lane, 2)])

    def pack_rows(self, k: ir.Value, n0: ir.Value, nv: int) -> list[ir.Value]:
        """Packs FP32 B's panel row k at columns n0.. (one chunk, prefetching the chunk rows
        ahead from DDR) and returns it as the block's `nv` vectors (`b_row` for each)."""
        kb, b = self.kb, self.b
        v = read_chunk(kb, b, k, n0)
        prefetch_ahead(kb, b, k, n0)
        vector.store(v, self.b_buf, [self._b_offset(k, n0, 0, 1)])
        return [vector.extract_strided_slice(_vt(self.b_buf.type.element_type), v, [LANES * j], [LANES], [1])
                for j in range(nv)]

    def fma(self, a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
        if self.is_int:
            return arith.addi(acc, arith.muli(a, b))
        return isa.multiply_add(a, b, acc)


def _block(kb: KernelBuilder, ops: _Operands, out: TileBuf, m0: ir.Value, n0: ir.Value,
           mr: int, nv: int, init, pack: bool = False, ahead: ir.Value | None = None) -> None:
    """out[m0:m0+mr, n0:n0+16*nv] = init(row, col) + A[m0:m0+mr, :] @ B[:, n0:...];
    `pack`: this block packs B's panel at n0 (inline packing); `ahead`: it prefetches the
    panel at that column (a cached panel, out of L2)."""
    accs = [init(i, j) for i in range(mr) for j in range(nv)]
    rows = [arith.addi(m0, kb.idx(i)) for i in range(mr)]
    cols = [arith.addi(n0, kb.idx(LANES * j)) for j in range(nv)]
    if ops.dot:
        loop = scf.ForOp(kb.idx(0), kb.idx(ops.K // 2), kb.idx(1), accs)
        with ir.InsertionPoint(loop.body):
            kp = loop.induction_variable
            if ahead is not None:
                for j in range(nv):
                    memref.prefetch(ops.b_buf, [ops._b_offset(kp, ahead, LANES * j, 2)], False, 3, True)
            bs = [ops.b_pair_row(kp, n0, LANES * j) for j in range(nv)]
            it = iter(loop.inner_iter_args)
            new = []
            for r in rows:
                ap = ops.a_pair(r, kp)
                new += [isa.bf16_dot(next(it), ap, bj) for bj in bs]
            scf.yield_(new)
    else:
        loop = scf.ForOp(kb.idx(0), kb.idx(ops.K), kb.idx(1), accs)
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            if ahead is not None:
                for j in range(nv):
                    memref.prefetch(ops.b_buf, [ops._b_offset(k, ahead, LANES * j, 1)], False, 3, True)
            bs = ops.pack_rows(k, n0, nv) if pack else [ops.b_row(k, n0, LANES * j) for j in range(nv)]
            it = iter(loop.inner_iter_args)
            new = []
            for r in rows:
                av = ops.a_elem(r, k)
                new += [ops.fma(av, bj, next(it)) for bj in bs]
            scf.yield_(new)
    res = iter(loop.results)
    for r in rows:
        base = arith.muli(r, kb.idx(out.pitch))
        for c in cols:
            vector.store(next(res), out.buf, [arith.addi(base, c)])


def emit_matmul(kb: KernelBuilder, a: TileBuf | LazyTile, b: TileBuf | LazyTile, out: TileBuf,
                init: Init) -> None:
    """out = init + a @ b."""
    acc_elem = out.buf.type.element_type
    MR, nr = isa.matmul_block()
    nr = min(nr, out.pitch)
    ops = _Operands(kb, a, b, acc_elem, out.pitch, nr)
    if out.pitch % LANES or nr % LANES:
        raise AssertionError("matmul output pitch must be a multiple of 16 lanes")
    if ops.row != nr and ops.panel != 1:
        raise AssertionError("packed B panels must be as wide as the output block")
    if ops.amx:
        lower_matmul_amx.emit_amx(kb, ops, out, init)
        return
    vt = _vt(acc_elem)
    nv = nr // LANES
    m_main = (out.rows // MR) * MR
    tail = [out.rows - m_main] if out.rows > m_main else []
    if tail and m_main:  # the last MR + rest rows as two even blocks: a short one's few
        # accumulators leave the FMA latency exposed (2 x 16 lanes at x86-64-v3: four ymm)
        m_main -= MR
        tail = [(MR + tail[0]) // 2, (MR + tail[0] + 1) // 2]

    def block(m0: ir.Value, n0: ir.Value, mr: int, pack: bool = False, ahead=None) -> None:
        def start(i: int, j: int) -> ir.Value:
            return init.vector(kb, vt, arith.addi(m0, kb.idx(i)), arith.addi(n0, kb.idx(LANES * j)))
        _block(kb, ops, out, m0, n0, mr, nv, start, pack, ahead)

    def panels(pack: bool) -> None:
        cached = ops.fresh is not None and not pack
        with kb.loop(0, out.pitch, nr) as ln:
            n0 = ln.induction_variable
            first = 0
            if pack or cached:  # the first row block packs the panel, or fetches the next one
                first = MR if m_main else tail[0]
                ahead = arith.remui(arith.addi(n0, kb.idx(nr)), kb.idx(out.pitch)) if cached else None
                block(kb.idx(0), n0, first, pack=pack, ahead=ahead)
            if m_main > first:
                with kb.loop(first, m_main, MR) as lm:
                    block(lm.induction_variable, n0, MR)
            m0 = m_main
            for rows in tail:
                if m0 >= first:
                    block(kb.idx(m0), n0, rows)
                m0 += rows

    if not ops.pack_inline or ops.fresh is None:
        panels(ops.pack_inline)
        return
    branch = scf.IfOp(ops.fresh, [], has_else=True)  # packed panels in the call's cache: read them
    with ir.InsertionPoint(branch.then_block):
        panels(True)
        ops.mark()
        scf.yield_([])
    with ir.InsertionPoint(branch.else_block):
        panels(False)
        scf.yield_([])


def _check(lc: LowerContext, name: str, a: TileBuf, b: TileBuf | LazyTile, out_dtype: DataType) -> None:
    if a.dtype not in _ACC or b.dtype is not a.dtype:
        raise unsupported(lc.where(name), a.dtype if a.dtype not in _ACC else b.dtype)
    if _ACC[a.dtype] is not out_dtype:
        raise lc.error(f"{name}: accumulator dtype {out_dtype.name} does not match operand dtype "
                       f"{a.dtype.name} (expected {_ACC[a.dtype].name})")


def _narrow_output(lc: LowerContext, out: TileBuf, name: str) -> TileBuf:
    """Matmul results need a 16-lane pitch; narrow tiles are widened (extra columns unused)."""
    if out.pitch % LANES == 0:
        return out
    raise lc.error(f"{name}: output tiles narrower than {LANES} columns are not supported "
                   f"(got {out.cols} columns)")


def lower_matmul(lc: LowerContext, short: str, a: dict) -> TileBuf:
    name = f"tile.{short}"
    if a.get("a_trans") or a.get("b_trans"):
        raise lc.error(f"{name} with a_trans / b_trans is not supported by the kernel backend; "
                       "transpose the operand tile first")
    # a fused load of A may stay lazy: the micro-kernel may read it in place (`_Operands`)
    lhs = lc.operand(a["lhs"]) if isinstance(a["lhs"], pir.Call) else lc.tile(a["lhs"])
    rhs = lc.operand(a["rhs"])
    out = _narrow_output(lc, lc.result_tile(), name)
    _check(lc, name, lhs, rhs, out.dtype)
    init = Init()
    if short in ("matmul_bias", "gemv_bias"):
        init = Init(bias=lc.tile(a["bias"]))
    elif short in ("matmul_acc", "gemv_acc"):
        cond = a.get("init_cond")
        fresh = None
        if cond is not None:
            v, d = lower_scalar(lc, cond)
            fresh = convert(v, d, BOOL)
        init = Init(acc=lc.tile(a["acc"]), fresh=fresh)
    emit_matmul(lc.kb, lhs, rhs, out, init)
    return out


def register(table: dict) -> None:
    for n in ("matmul", "matmul_acc", "matmul_bias", "gemv", "gemv_acc", "gemv_bias"):
        table[f"tile.{n}"] = lower_matmul
