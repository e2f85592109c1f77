"""`GEMM`: ``c = a @ b`` (or ``a @ b.T`` for a column-major b) with fp32 / bf16 / fp16
inputs and an fp32 result, in [tm, tn] output blocks over tk-deep K slices."""

from __future__ import annotations

import plang as pl

from ...dtypes import BF16, FP16, FP32
from ...ir.enums import MemorySpace
from ...target import get_current_device
from ..library import JitOperator
from ..operands import In, Out, as_data_type
from ..operator import Unresolvable
from ..params import Select, param, tunable

TILES = (16, 32, 64, 128, 256)
DTYPES = (FP32, BF16, FP16)
WALKS = ("columns", "rows")
"""How a block walks its output tiles: column strips outside (one [K, tn] strip of b stays
in L2 while the row tiles pass it) or row strips outside (one [tm, K] strip of a stays).
`resolve` picks columns (the tuner tries both). 1024^3, 64x256x256 tiles: one Zen 4 core,
FP32 83-87 GFLOP/s with columns outside, 63-68 with rows, BF16 178-185 against 184-189; two
Zen 5 cores, BF16 761-869 against 739-847 (one process, interleaved). The deep `tk` of the
domain (a whole-K A strip, one accumulator round trip per output tile): 1024^3 BF16 on two
Zen 4 cores, tn=128 tk=1024 against tn=256 tk=256, 5.44 / 6.44 ms against 5.66 / 6.75."""


DEEP = (*TILES, 512, 1024)
"""The K depths `resolve` starts from where b is packed as it is (FP32, BF16 for the pair
dot): the deepest that divides K and whose operand tiles fit the Mat buffer, with b's strips
256 bytes wide (tn=128 BF16, 64 FP32): one accumulator round trip per output tile. 1024^3 on
two Zen 4 cores, interleaved, BF16 64x128x1024 5.57 / 5.76 ms against 64x256x256 5.88 / 6.05
(torch 5.55 / 5.80), FP32 64x64x1024 10.64 / 10.77 against 10.92 / 11.35. Where b is
converted to FP32 as it is packed (FP16; BF16 without the pair dot), deep tiles lose: BF16 at
x86-64-v3 64x128x1024 22.3 / 21.7 ms against 64x256x256 17.9 / 16.9."""


def _divisor(n: int, choices: tuple[int, ...]) -> int | None:
    return next((c for c in reversed(choices) if n % c == 0), None)


class GEMM(JitOperator):
    """c[M, N] = a[M, K] @ b, b given [K, N], or [N, K] where ``b_col_maj`` (a `Select`);
    `blocks` SPMD blocks of M rows, [tm, tn] output tiles accumulated over tk-deep slices,
    walked in column or row strips (`walk`, one of `WALKS`); one core runs each block whole
    (`single_core`). A column-major FP32 b tile is packed straight from its columns (its
    panels cached for the call, as a row-major b's), and so is a BF16 one where the target
    has the pair dot product (its k pairs are 32-bit words of b's rows); another 16-bit one
    is transposed in the vector buffer first."""

    M: int = param()
    N: int = param()
    K: int = param()
    dtype = param(default=FP32, array=True)
    b_col_maj: bool = param(default=False, array=True)
    tm: int | None = tunable(domain=(32, 64))
    tn: int | None = tunable(domain=(64, 128, 256))
    tk: int | None = tunable(domain=(128, 256, 512, 1024))
    blocks: int | None = tunable(domain=(1, 2, 4))
    walk: str | None = tunable(domain=WALKS)
    a = In(M, K, dtype=dtype, obj_shape=(tm, tk), per=blocks)
    b = In(Select(b_col_maj, (N, K), (K, N)), dtype=dtype, obj_shape=(tk, tn))
    c = Out(M, N, dtype=FP32)

    rtol, atol = 2e-3, 2e-3

    def validate(self):
        if as_data_type(self.dtype) not in DTYPES:
            raise ValueError(f"GEMM: dtype={self.dtype!r} is none of {', '.join(d.name for d in DTYPES)}")
        if self.walk not in (None, *WALKS):
            raise ValueError(f"GEMM: walk={self.walk!r} is none of {', '.join(map(repr, WALKS))}")

    def resolve(self, dev):
        blocks = self.blocks or next(b for b in range(min(dev.clusters, self.M), 0, -1) if self.M % b == 0)
        dtype = as_data_type(self.dtype)
        item = dtype.itemsize
        # b packed as it is (FP32, BF16 pairs for the pair dot), else converted to FP32 first
        packed_as_is = dtype is FP32 or (dtype is BF16 and dev.isa.bf16_dot)
        tm = self.tm or _divisor(self.M // blocks, (16, 32, 64))
        strips = tuple(t for t in TILES if t * item <= 256) if packed_as_is else TILES
        tn = self.tn or _divisor(self.N, strips)
        tk = self.tk or _divisor(self.K, DEEP if packed_as_is else TILES)
        while (tm and tn and tk and not self.tk and tk > min(TILES)
               and ((tm + tn) * tk * item > dev.capacity(MemorySpace.Mat)
                    or self._transposed_in_buffer() and tn * tk * item > dev.capacity(MemorySpace.Vec))):
            tk //= 2
        if None in (tm, tn, tk):
            raise Unresolvable(f"GEMM: M={self.M}, N={self.N}, K={self.K} have no tile sizes "
                               f"among {TILES} that divide them")
        return self.replace(tm=tm, tn=tn, tk=tk, blocks=blocks, walk=self.walk or "columns")

    def compatible(self):
        if self.M % (self.tm * self.blocks) or self.N % self.tn or self.K % self.tk:
            raise ValueError(f"GEMM: tm*blocks={self.tm}*{self.blocks}, tn={self.tn}, tk={self.tk} "
                             f"must divide M={self.M}, N={self.N}, K={self.K}")
        item = as_data_type(self.dtype).itemsize
        dev = get_current_device()
        # the cube's operand tiles are staged from Mat (L1), split at L0 by the passes
        need, have = (self.tm + self.tn) * self.tk * item, dev.capacity(MemorySpace.Mat)
        if need > have:
            raise ValueError(f"GEMM: a {self.tm}x{self.tn}x{self.tk} step stages {need // 1024} KiB of "
                             f"operand tiles, the Mat buffer holds {have // 1024} KiB")
        need, have = self.tn * self.tk * item, dev.capacity(MemorySpace.Vec)
        if self._transposed_in_buffer() and need > have:
            raise ValueError(f"GEMM: a column-major {self.tn}x{self.tk} b tile is transposed in the vector "
                             f"buffer: {need // 1024} KiB, it holds {have // 1024} KiB")

    def _transposed_in_buffer(self) -> bool:
        """A column-major b tile is transposed in the vector buffer (FP32 is packed from its
        columns instead)."""
        return bool(self.b_col_maj) and as_data_type(self.dtype).itemsize != 4

    def build(self, cores):
        tm, tn, tk, blocks = cores.tm, cores.tn, cores.tk, cores.blocks
        col_major, rows_outside = cores.b_col_maj, cores.walk == "rows"

        @pl.jit.inline
        def b_tile(b: pl.Tensor, k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]):
            if col_major:
                return pl.transpose(pl.load(b, [j, k], [tn, tk]), 0, 1)
            return pl.load(b, [k, j], [tk, tn])

        @pl.jit.inline
        def out_tile(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, i: pl.Scalar[pl.INDEX],
                     j: pl.Scalar[pl.INDEX]):
            k_total = a.shape[1]
            acc0 = pl.matmul(pl.load(a, [i, 0], [tm, tk]), b_tile(b, 0, j))
            for k, (acc,) in pl.range(tk, k_total, tk, init_values=(acc0,)):
                acc_next = pl.matmul_acc(acc, pl.load(a, [i, k], [tm, tk]), b_tile(b, k, j))
                acc_out = pl.yield_(acc_next)
            return pl.store(acc_out, [i, j], c)

        @pl.jit.incore(single_core=True)
        def gemm_block(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
            n = c.shape[1]
            share = a.shape[0] // blocks
            first = pl.tile.get_block_idx() * share
            if rows_outside:
                for i in pl.range(first, first + share, tm):
                    for j in pl.range(0, n, tn):
                        c = out_tile(a, b, c, i, j)
            else:
                for j in pl.range(0, n, tn):
                    for i in pl.range(first, first + share, tm):
                        c = out_tile(a, b, c, i, j)
            return c

        @pl.jit
        def gemm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
            with pl.spmd(blocks):
                c = gemm_block(a, b, c)
            return c

        return gemm

    def reference(self, a, b):
        b = b.float().T if self.b_col_maj else b.float()
        return a.float() @ b
