"""An accumulating op on a `tile.slice` window of an Acc tile writes through to that tile
(the window shares its buffer), whether the window is re-taken every K step or carried
through the K loop; the result matches torch."""

from __future__ import annotations

import torch

import plang as pl

M, K, NT, TILES, KT = 16, 128, 64, 2, 64
N = NT * TILES


@pl.program
class Rewindowed:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        acc = pl.tile.create([M, N], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for t in pl.range(TILES):
            for k0 in pl.range(0, K, KT):
                a_l0 = pl.move(pl.load(a, [0, k0], [M, KT], target_memory=pl.MemorySpace.Mat),
                               target_memory=pl.MemorySpace.Left)
                b_l0 = pl.move(pl.load(b, [k0, t * NT], [KT, NT], target_memory=pl.MemorySpace.Mat),
                               target_memory=pl.MemorySpace.Right)
                win = pl.tile.slice(acc, [M, NT], [0, t * NT])
                win = pl.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))
        return pl.store(acc, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        return self.kernel(a, b, c)


@pl.program
class CarriedWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        acc = pl.tile.create([M, N], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for t in pl.range(TILES):
            win = pl.tile.slice(acc, [M, NT], [0, t * NT])
            for k0 in pl.range(0, K, KT):
                a_l0 = pl.move(pl.load(a, [0, k0], [M, KT], target_memory=pl.MemorySpace.Mat),
                               target_memory=pl.MemorySpace.Left)
                b_l0 = pl.move(pl.load(b, [k0, t * NT], [KT, NT], target_memory=pl.MemorySpace.Mat),
                               target_memory=pl.MemorySpace.Right)
                win = pl.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))
        return pl.store(acc, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        return self.kernel(a, b, c)


def _check(program) -> None:
    compiled = pl.compile(program)
    a, b, c = torch.randn(M, K), torch.randn(K, N), torch.full((M, N), float("nan"))
    compiled(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_a_window_taken_every_k_step_accumulates_into_its_parent():
    _check(Rewindowed)


def test_a_window_carried_through_the_k_loop_accumulates_into_its_parent():
    _check(CarriedWindow)


def test_the_window_and_its_write_back_stay_on_the_cube():
    lowered = pl.passes.PassManager().run(Rewindowed)
    kinds = {f.func_type for f in lowered.functions.values()}
    assert pl.FunctionType.AIV not in kinds and pl.FunctionType.AIC in kinds
