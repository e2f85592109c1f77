"""`RMSNorm` and `LayerNorm` over the last axis of an [M, N] fp32 tensor."""

from __future__ import annotations

import torch

import plang as pl

from ...dtypes import FP32
from ..library import JitOperator
from ..operands import In, Out
from ..params import param, tunable
from .common import BLOCKS, ROWS, RowBlocks


class RMSNorm(RowBlocks, JitOperator):
    """y = x * rsqrt(mean(x**2, -1) + eps) * weight (weight: [N]), `blocks` SPMD blocks of
    `rows`-row steps."""

    M: int = param()
    N: int = param()
    eps: float = param(default=1e-6, array=True)
    rows: int | None = tunable(domain=ROWS)
    blocks: int | None = tunable(domain=BLOCKS)
    x = In(M, N, dtype=FP32, obj_shape=(rows, N), per=blocks)
    weight = In(N, dtype=FP32, obj_shape=N, replicate=True, per=blocks)
    y = Out(like=x, dtype=FP32)

    def build(self, cores):
        rows, blocks, eps = cores.rows, cores.blocks, cores.eps

        @pl.jit.incore
        def rms_norm_block(x: pl.Tensor, weight: pl.Tensor, y: pl.Out[pl.Tensor]):
            m, n = x.shape
            share = m // blocks
            first = pl.tile.get_block_idx() * share
            w = pl.reshape(pl.load(weight, [0], [n]), [1, n])
            for r in pl.range(first, first + share, rows):
                t = pl.load(x, [r, 0], [rows, n])
                inv = pl.rsqrt(pl.add(pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / n), eps))
                y = pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv), w), [r, 0], y)
            return y

        @pl.jit
        def rms_norm(x: pl.Tensor, weight: pl.Tensor, y: pl.Out[pl.Tensor]):
            with pl.spmd(blocks):
                y = rms_norm_block(x, weight, y)
            return y

        return rms_norm

    def reference(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * weight


class LayerNorm(RowBlocks, JitOperator):
    """y = (x - mean) * rsqrt(var + eps) over the last axis, then ``* weight + bias`` where
    `affine` (weight, bias: [N]; operands only where affine is true)."""

    M: int = param()
    N: int = param()
    eps: float = param(default=1e-5, array=True)
    affine: bool = param(default=True, array=True)
    rows: int | None = tunable(domain=ROWS)
    blocks: int | None = tunable(domain=BLOCKS)
    x = In(M, N, dtype=FP32, obj_shape=(rows, N), per=blocks)
    weight = In(N, dtype=FP32, when=affine)
    bias = In(N, dtype=FP32, when=affine)
    y = Out(like=x, dtype=FP32)

    live_tiles = 4

    def build(self, cores):
        rows, blocks, eps, n = cores.rows, cores.blocks, cores.eps, cores.N

        @pl.jit.inline
        def normalized(x: pl.Tensor, r: pl.Scalar[pl.INDEX]):
            t = pl.load(x, [r, 0], [rows, n])
            c = pl.row_expand_sub(t, pl.mul(pl.row_sum(t), 1.0 / n))
            inv = pl.rsqrt(pl.add(pl.mul(pl.row_sum(pl.mul(c, c)), 1.0 / n), eps))
            return pl.row_expand_mul(c, inv)

        @pl.jit.incore
        def layer_norm_block(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            share = x.shape[0] // blocks
            first = pl.tile.get_block_idx() * share
            for r in pl.range(first, first + share, rows):
                y = pl.store(normalized(x, r), [r, 0], y)
            return y

        @pl.jit.incore
        def affine_block(x: pl.Tensor, weight: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
            share = x.shape[0] // blocks
            first = pl.tile.get_block_idx() * share
            w = pl.reshape(pl.load(weight, [0], [n]), [1, n])
            b = pl.reshape(pl.load(bias, [0], [n]), [1, n])
            for r in pl.range(first, first + share, rows):
                y = pl.store(pl.col_expand_add(pl.col_expand_mul(normalized(x, r), w), b), [r, 0], y)
            return y

        @pl.jit
        def layer_norm(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            with pl.spmd(blocks):
                y = layer_norm_block(x, y)
            return y

        @pl.jit
        def layer_norm_affine(x: pl.Tensor, weight: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
            with pl.spmd(blocks):
                y = affine_block(x, weight, bias, y)
            return y

        return layer_norm_affine if cores.affine else layer_norm

    def reference(self, x, weight=None, bias=None):
        return torch.nn.functional.layer_norm(x, (self.N,), weight, bias, self.eps)
