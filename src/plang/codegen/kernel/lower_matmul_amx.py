"""BF16 matmul on AMX tiles (x86 AMX-BF16, `isa.amx_bf16`): the micro-kernel of
`lower_matmul` where the target has tile registers.

An AMX tile register holds 16 rows of 64 bytes: a 16 × 32 BF16 block of A, 16 k pairs × 16
columns of B (the pair-interleaved panels `lower_matmul` packs for `vdpbf16ps` are already
that layout), or a 16 × 16 FP32 block of C; `tdpbf16ps` does C += A · B on them (16 × 16 × 32
multiply-adds, FP32 accumulation, BF16 products exact; like `vdpbf16ps` it treats denormal
inputs as zero). A block of 2 × 2 C tiles keeps 4 accumulators, 2 A and 2 B tiles: all 8
tile registers.

MLIR's lowering does not carry tiles through loop iterations (an `scf.for` over tiles does
not legalize), so k is unrolled in runs of `K_RUN` steps of 32 whose accumulators stay in
registers; between runs they go through the output tile. LLVM configures the tile shapes
(`ldtilecfg`) at function entry.
"""

from __future__ import annotations

from .builder import KernelBuilder, TileBuf
from .mlir import arith, ir, memref, scf, vector, x86

ROWS = 16
"""Rows of a tile register (and FP32 columns of a C tile)."""
K_STEP = 32
"""BF16 k values in one 64-byte A tile row."""
K_RUN = 16
"""k steps (of 32) unrolled with the accumulators in tile registers: up to k = 512 per run."""


def fits(a: TileBuf) -> bool:
    """Whether the AMX micro-kernel takes A: whole 16-row tiles, k a multiple of 32."""
    return a.cols % K_STEP == 0 and a.rows % ROWS == 0


def _tile(rows: int, cols: int, elem: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!x86.amx.tile<{rows}x{cols}x{elem}>")


def as_matrix(buf: ir.Value, cols: int) -> ir.Value:
    """A flat buffer (`memref<n x T>`, any offset) viewed as rows of `cols` elements."""
    t = ir.MemRefType(buf.type)
    dyn = ir.ShapedType.get_dynamic_size()
    n = t.shape[0]
    rows = n // cols if n != dyn else dyn
    offset = t.get_strides_and_offset()[1]
    layout = "" if offset == 0 else f", strided<[{cols}, 1], offset: {'?' if offset == dyn else offset}>"
    shape = f"{rows if rows != dyn else '?'}x{cols}"
    result = ir.Type.parse(f"memref<{shape}x{t.element_type}{layout}>")
    sizes = [] if rows != dyn else [arith.divui(memref.dim(buf, arith.constant(ir.IndexType.get(), 0)),
                                                arith.constant(ir.IndexType.get(), cols))]
    return memref.expand_shape(result, buf, [[0, 1]], sizes, [rows, cols])


class AmxMatmul:
    """out = start + A @ B for `lower_matmul._Operands` with BF16 pair-packed B panels."""

    def __init__(self, kb: KernelBuilder, ops, out: TileBuf) -> None:
        self.kb, self.ops, self.out = kb, ops, out
        bf16, f32 = ops.a.buf.type.element_type, out.buf.type.element_type
        self.a_tile, self.c_tile = _tile(ROWS, K_STEP, bf16), _tile(ROWS, ROWS, f32)
        self.a = as_matrix(ops.a_buf, ops.a.pitch)
        self.c = as_matrix(out.buf, out.pitch)
        dyn = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], bf16)
        b_buf = ops.b_buf if ir.MemRefType(ops.b_buf.type).shape[0] < 0 else memref.cast(dyn, ops.b_buf)
        self.b = as_matrix(b_buf, 2 * ops.row)  # a panel row: one k pair of `row` columns

    def _b_at(self, n: ir.Value, kp: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(row, col) in the packed-B matrix of k pair `kp` at column `n` (16-aligned)."""
        kb, ops = self.kb, self.ops
        nr = ops.row
        panel = arith.divui(n, kb.idx(nr))
        first = arith.addi(arith.divui(ops.base, kb.idx(2 * nr)), arith.muli(panel, kb.idx(ops.K // 2)))
        return arith.addi(first, kp), arith.muli(arith.remui(n, kb.idx(nr)), kb.idx(2))

    def _run(self, rows: list[ir.Value], cols: list[ir.Value], k0: ir.Value, steps: int, start) -> None:
        """One unrolled run of `steps` k steps from k0 for the C tiles at rows × cols;
        `start(r, c)` gives each accumulator's first value."""
        kb = self.kb
        accs = [start(r, c) for r in rows for c in cols]
        for s in range(steps):
            k = arith.addi(k0, kb.idx(K_STEP * s))
            kp = arith.divui(k, kb.idx(2))
            a_t = [x86.amx_tile_load(self.a_tile, self.a, [r, k]) for r in rows]
            b_t = [x86.amx_tile_load(self.a_tile, self.b, list(self._b_at(c, kp))) for c in cols]
            accs = [x86.amx_tile_mulf(a, b, accs[i * len(cols) + j])
                    for i, a in enumerate(a_t) for j, b in enumerate(b_t)]
        it = iter(accs)
        for r in rows:
            for c in cols:
                x86.amx_tile_store(self.c, [r, c], next(it))

    def _block(self, m0: ir.Value, n0: ir.Value, mt: int, nt: int, start) -> None:
        kb, steps = self.kb, self.ops.K // K_STEP
        rows = [arith.addi(m0, kb.idx(ROWS * i)) for i in range(mt)]
        cols = [arith.addi(n0, kb.idx(ROWS * j)) for j in range(nt)]
        first = min(steps, K_RUN)
        self._run(rows, cols, kb.idx(0), first, start)
        full, rest = divmod(steps - first, K_RUN)
        if full:
            with kb.loop(first * K_STEP, (first + full * K_RUN) * K_STEP, K_RUN * K_STEP) as lk:
                self._run(rows, cols, lk.induction_variable, K_RUN, self.from_out)
        if rest:
            self._run(rows, cols, kb.idx((steps - rest) * K_STEP), rest, self.from_out)

    def from_out(self, r: ir.Value, c: ir.Value) -> ir.Value:
        return x86.amx_tile_load(self.c_tile, self.c, [r, c])

    def zero(self, r: ir.Value, c: ir.Value) -> ir.Value:
        return x86.amx_tile_zero(self.c_tile)

    def from_tile(self, acc: TileBuf):
        """A `start` that loads each accumulator from the tile `acc`."""
        view = as_matrix(acc.buf, acc.pitch)
        return lambda r, c: x86.amx_tile_load(self.c_tile, view, [r, c])

    def emit(self, start) -> None:
        """All of out's blocks: 2 × 2 tiles, then the odd 16-row / 16-column edges."""
        kb, out = self.kb, self.out
        m_main, n_main = out.rows // (2 * ROWS) * 2 * ROWS, out.pitch // (2 * ROWS) * 2 * ROWS
        spans = [(0, m_main, 2), (m_main, out.rows, 1)]
        for m_lo, m_hi, mt in spans:
            if m_hi <= m_lo:
                continue
            with kb.loop(m_lo, m_hi, mt * ROWS) as lm:
                m0 = lm.induction_variable
                if n_main:
                    with kb.loop(0, n_main, 2 * ROWS) as ln:
                        self._block(m0, ln.induction_variable, mt, 2, start)
                if out.pitch > n_main:
                    self._block(m0, kb.idx(n_main), mt, 1, start)


def emit_amx(kb: KernelBuilder, ops, out: TileBuf, init) -> None:
    """out = init + A @ B on AMX tiles (`init`: `lower_matmul.Init`)."""
    mm = AmxMatmul(kb, ops, out)
    if init.bias is not None:  # every row of out starts as the bias row
        vt = ir.VectorType.get([ROWS], out.buf.type.element_type)
        with kb.loop(0, out.rows) as lr, kb.loop(0, out.pitch, ROWS) as lc:
            c = lc.induction_variable
            base = arith.muli(lr.induction_variable, kb.idx(out.pitch))
            vector.store(vector.load(vt, init.bias.buf, [c]), out.buf, [arith.addi(base, c)])
        mm.emit(mm.from_out)
    elif init.acc is None:
        mm.emit(mm.zero)
    elif init.fresh is None:
        mm.emit(mm.from_tile(init.acc))
    else:
        branch = scf.IfOp(init.fresh, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            mm.emit(mm.zero)
            scf.yield_([])
        with ir.InsertionPoint(branch.else_block):
            mm.emit(mm.from_tile(init.acc))
            scf.yield_([])
