"""`Attention`: a fused attention block, ``softmax(q @ k^T * scale) @ v`` per head, with an
online softmax over key/value blocks (the [S, L] scores never leave the core)."""

from __future__ import annotations

import torch

import plang as pl

from ...dtypes import BF16, FP32
from ...ir.enums import MemorySpace
from ...target import get_current_device
from ..library import JitOperator
from ..operands import In, Out, as_data_type
from ..operator import Unresolvable
from ..params import param, tunable


class Attention(JitOperator):
    """o[H, S, D] = softmax(q[H, S, D] @ k[H, L, D]^T * scale) @ v[H, L, D], fp32 or bf16
    inputs, fp32 result. `blocks` SPMD blocks share the (head, query block) pairs; each pair
    walks the keys `kv` rows at a time keeping a running row max, row sum and output. The
    kernel runs whole on one core (`single_core`): no AIC / AIV hand-off per key block."""

    H: int = param()
    S: int = param()
    L: int = param()
    D: int = param()
    dtype = param(default=FP32, array=True)
    scale: float = param(default=lambda op: op.D ** -0.5, array=True)
    qr: int | None = tunable(domain=(32, 64, 128))
    kv: int | None = tunable(domain=(64, 128, 256, 512))
    blocks: int | None = tunable(domain=(1, 2, 4))
    q = In(H, S, D, dtype=dtype, obj_shape=(qr, D), per=blocks)
    k = In(H, L, D, dtype=dtype, obj_shape=(kv, D))
    v = In(H, L, D, dtype=dtype, obj_shape=(kv, D))
    o = Out(H, S, D, dtype=FP32)

    rtol, atol = 1e-2, 1e-2

    def validate(self):
        if as_data_type(self.dtype) not in (FP32, BF16):
            raise ValueError(f"Attention: dtype={self.dtype!r} is neither FP32 nor BF16")

    def _live_bytes(self) -> int:
        """Vector-buffer bytes of one step: scores and probabilities [qr, kv], the running
        output [qr, D] twice, and the query tile."""
        return 4 * (2 * self.qr * self.kv + 3 * self.qr * self.D)

    def resolve(self, dev):
        pairs = self.H * self.S
        qr = self.qr or next((r for r in (64, 32, 16) if self.S % r == 0), None)
        kv = self.kv or next((c for c in (128, 64, 32) if self.L % c == 0), None)
        if qr is None or kv is None:
            raise Unresolvable(f"Attention: S={self.S} and L={self.L} need a multiple of 16 and 32")
        blocks = self.blocks or next(b for b in range(min(dev.clusters, pairs // qr), 0, -1)
                                     if (pairs // qr) % b == 0)
        return self.replace(qr=qr, kv=kv, blocks=blocks)

    def compatible(self):
        if self.S % self.qr or self.L % self.kv or (self.H * self.S // self.qr) % self.blocks:
            raise ValueError(f"Attention: qr={self.qr} must divide S={self.S}, kv={self.kv} L={self.L}, "
                             f"and blocks={self.blocks} the {self.H * self.S // self.qr} query blocks")
        have = get_current_device().capacity(MemorySpace.Vec)
        if self._live_bytes() > have:
            raise ValueError(f"Attention: qr={self.qr}, kv={self.kv} need {self._live_bytes() // 1024} KiB "
                             f"of tiles, the vector buffer holds {have // 1024} KiB")

    def build(self, cores):
        qr, kv, blocks, scale, D = cores.qr, cores.kv, cores.blocks, cores.scale, cores.D
        dtype = as_data_type(cores.dtype)  # P goes back to the cube in the inputs' dtype

        @pl.jit.inline
        def query_block(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Tensor, h: pl.Scalar[pl.INDEX],
                        r: pl.Scalar[pl.INDEX]):
            # q scaled once per query block, not the scores once per key block
            qt = pl.mul(pl.reshape(pl.slice(q, [1, qr, D], [h, r, 0]), [qr, D]), scale)
            m0 = pl.tensor.full([qr, 1], pl.FP32, -1e30)
            l0 = pl.tensor.full([qr, 1], pl.FP32, 0.0)
            acc0 = pl.tensor.full([qr, D], pl.FP32, 0.0)
            for j, (m, l, acc) in pl.range(0, k.shape[1], kv, init_values=(m0, l0, acc0)):
                kj = pl.reshape(pl.slice(k, [1, kv, D], [h, j, 0]), [kv, D])
                vj = pl.reshape(pl.slice(v, [1, kv, D], [h, j, 0]), [kv, D])
                s = pl.matmul(qt, kj, b_trans=True, out_dtype=pl.FP32)
                m_new = pl.maximum(m, pl.row_max(s))
                p = pl.row_expand_expdif(s, m_new)
                alpha = pl.exp(pl.sub(m, m_new))
                l_new = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                pv = pl.matmul(pl.cast(p, dtype), vj, out_dtype=pl.FP32)
                acc_new = pl.add(pl.row_expand_mul(acc, alpha), pv)
                m_out, l_out, acc_out = pl.yield_(m_new, l_new, acc_new)
            out = pl.reshape(pl.row_expand_div(acc_out, l_out), [1, qr, D])
            return pl.assemble(o, out, [h, r, 0])

        @pl.jit.incore(single_core=True)
        def attention_block(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
            per_head = q.shape[1] // qr
            share = q.shape[0] * per_head // blocks
            first = pl.tile.get_block_idx() * share
            last = first + share
            # pairs by head: the key / value tiles recur through a head's query blocks
            for h in pl.range(first // per_head, (last + per_head - 1) // per_head):
                for t in pl.range(pl.max(first, h * per_head), pl.min(last, (h + 1) * per_head)):
                    o = query_block(q, k, v, o, h, (t - h * per_head) * qr)
            return o

        @pl.jit
        def attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
            with pl.spmd(blocks):
                o = attention_block(q, k, v, o)
            return o

        return attention

    def reference(self, q, k, v):
        s = torch.softmax(q.float() @ k.float().transpose(-1, -2) * self.scale, dim=-1)
        return s.to(q.dtype).float() @ v.float()
