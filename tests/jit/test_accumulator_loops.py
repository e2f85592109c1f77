"""A split-K accumulator created in Acc and rebound by `pl.matmul_acc(acc, ..., init_cond=)` in
a loop is one loop-carried variable (the rebinding's result has no memory space until
InferTileMemorySpace places it), not a fresh one: the result matches torch."""

from __future__ import annotations

import torch

import plang as pl


@pl.jit.incore
def split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.MemorySpace.Acc)
    for k0 in pl.range(0, 128, 32):
        a_l1 = pl.load(a, offsets=[0, k0], shapes=[32, 32], target_memory=pl.MemorySpace.Mat)
        b_l1 = pl.load(b, offsets=[k0, 0], shapes=[32, 32], target_memory=pl.MemorySpace.Mat)
        a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
        b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul_acc(acc, a_l0, b_l0, init_cond=(k0 == 0))
    return pl.store(acc, offsets=[0, 0], output_tensor=c)


@pl.jit
def entry(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    return split_k(a, b, c)


def test_split_k_accumulator_carried_through_the_loop():
    a, b = torch.randn(32, 128), torch.randn(128, 32)
    c = torch.full((32, 32), float("nan"))
    entry(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
