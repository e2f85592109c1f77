"""Accumulators and branch results across loops and ifs.

A split-K accumulator created in Acc and rebound by `pl.matmul_acc(acc, ..., init_cond=)` in
a loop is one loop-carried variable (the rebinding's result has no memory space until
InferTileMemorySpace places it), not a fresh one. A loop started from a vector-side tile that
yields matmul results carries them in Acc, and branches yielding a matmul result and a vector
result meet in Vec, on one core and split between AIC and AIV: each result matches torch."""

from __future__ import annotations

import pytest
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


def _entry(body):
    @pl.jit
    def run(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        c = body(a, b, c)
        return c

    return run


def _rescaled_accumulation(single_core: bool):
    """acc = acc * 0.5 + a_k @ b_k over K chunks, acc starting as a vector-side `full`: the
    loop carries a matmul result, so its accumulator lives where the body yields it (Acc)."""

    @pl.jit.incore(single_core=single_core)
    def body(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        acc0 = pl.tensor.full([32, 32], pl.FP32, 0.0)
        for k0, (acc,) in pl.range(0, 128, 32, init_values=(acc0,)):
            ak = pl.slice(a, [32, 32], [0, k0])
            bk = pl.slice(b, [32, 32], [k0, 0])
            acc_next = pl.matmul_acc(pl.mul(acc, 0.5), ak, bk)
            (acc_out,) = pl.yield_(acc_next)
        c = pl.assemble(c, acc_out, [0, 0])
        return c

    return _entry(body)


def _last_chunk(single_core: bool):
    @pl.jit.incore(single_core=single_core)
    def body(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        acc0 = pl.tensor.full([32, 32], pl.FP32, 0.0)
        for k0, (acc,) in pl.range(0, 128, 32, init_values=(acc0,)):
            acc_next = pl.matmul(pl.slice(a, [32, 32], [0, k0]), pl.slice(b, [32, 32], [k0, 0]))
            (acc_out,) = pl.yield_(acc_next)
        c = pl.assemble(c, pl.exp(acc_out), [0, 0])
        return c

    return _entry(body)


@pytest.mark.parametrize("single_core", [True, False], ids=["single-core", "split"])
def test_a_vector_side_init_carried_into_a_matmul_loop_matches_torch(single_core):
    a, b = torch.randn(32, 128) / 4, torch.randn(128, 32) / 4
    want = torch.zeros(32, 32)
    for k0 in range(0, 128, 32):
        want = want * 0.5 + a[:, k0:k0 + 32] @ b[k0:k0 + 32]
    c = torch.full((32, 32), float("nan"))
    _rescaled_accumulation(single_core)(a, b, c)
    torch.testing.assert_close(c, want, rtol=1e-4, atol=1e-4)
    c = torch.full((32, 32), float("nan"))
    _last_chunk(single_core)(a, b, c)
    torch.testing.assert_close(c, torch.exp(a[:, 96:] @ b[96:]), rtol=1e-4, atol=1e-4)


def _either_branch(single_core: bool):
    @pl.jit.incore(single_core=single_core)
    def body(x: pl.Tensor, a: pl.Tensor, b: pl.Tensor, flag: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
        if flag > 0:
            t = pl.matmul(a, b)
            (r,) = pl.yield_(t)
        else:
            u = pl.exp(x)
            (r,) = pl.yield_(u)
        c = pl.assemble(c, pl.add(r, 1.0), [0, 0])
        return c

    @pl.jit
    def run(x: pl.Tensor, a: pl.Tensor, b: pl.Tensor, flag: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
        c = body(x, a, b, flag, c)
        return c

    return run


@pytest.mark.parametrize("single_core", [True, False], ids=["single-core", "split"])
def test_branches_yielding_a_matmul_result_and_a_vector_result_match_torch(single_core):
    x, a, b = torch.randn(32, 32), torch.randn(32, 32), torch.randn(32, 32)
    run = _either_branch(single_core)
    for flag, want in ((1, a @ b + 1), (0, torch.exp(x) + 1)):
        c = torch.full((32, 32), float("nan"))
        run(x, a, b, flag, c)
        torch.testing.assert_close(c, want, rtol=1e-4, atol=1e-4)


def _branch_in_a_loop(single_core: bool):
    @pl.jit.incore(single_core=single_core)
    def body(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        acc0 = pl.tensor.full([32, 32], pl.FP32, 1.0)
        for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):
            if i % 2 == 0:
                t = pl.matmul(pl.slice(a, [32, 32], [0, 0]), pl.slice(b, [32, 32], [0, 0]))
                (r,) = pl.yield_(t)
            else:
                u = pl.add(acc, 1.0)
                (r,) = pl.yield_(u)
            (acc_out,) = pl.yield_(r)
        c = pl.assemble(c, acc_out, [0, 0])
        return c

    return _entry(body)


def _one_init_two_loops(single_core: bool):
    @pl.jit.incore(single_core=single_core)
    def body(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        ones = pl.tensor.full([32, 32], pl.FP32, 1.0)
        for k0, (acc,) in pl.range(0, 64, 32, init_values=(ones,)):
            nxt = pl.matmul_acc(acc, pl.slice(a, [32, 32], [0, k0]), pl.slice(b, [32, 32], [k0, 0]))
            (acc_out,) = pl.yield_(nxt)
        for i, (v,) in pl.range(0, 3, 1, init_values=(ones,)):
            v2 = pl.add(v, 1.0)
            (v_out,) = pl.yield_(v2)
        c = pl.assemble(c, pl.add(acc_out, v_out), [0, 0])
        return c

    return _entry(body)


@pytest.mark.parametrize("single_core", [True, False], ids=["single-core", "split"])
@pytest.mark.parametrize("build, want", [
    (_branch_in_a_loop, lambda a, b: a[:, :32] @ b[:32] + 1),
    (_one_init_two_loops, lambda a, b: (1 + a @ b) + 4),
], ids=["if-in-a-loop", "one-init-two-loops"])
def test_tiles_carried_across_loops_and_branches_match_torch(build, want, single_core):
    """A loop carrying an if whose branches yield a matmul result and a vector result of the
    iter arg; one init carried by a matmul loop and by a vector loop."""
    a, b = torch.randn(32, 64) / 4, torch.randn(64, 32) / 4
    c = torch.full((32, 32), float("nan"))
    build(single_core)(a, b, c)
    torch.testing.assert_close(c, want(a, b), rtol=1e-4, atol=1e-4)
