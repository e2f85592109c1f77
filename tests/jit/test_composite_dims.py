"""A parameter dim written as a multiple of a dynamic dim (`pl.Tensor[[M * 2, N], ...]`, as
reference programs do): the call binds M from the tensor's extent and checks the multiple."""

from __future__ import annotations

import pytest
import torch

import plang as pl

M, N = pl.dynamic("M"), pl.dynamic("N")


@pl.program
class Doubled:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[M * 2, N], pl.FP32], b: pl.Tensor[[M * 2, N], pl.FP32],
                   c: pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]) -> pl.Tensor[[M * 2, N], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
        return pl.store(t, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M * 2, N], pl.FP32], b: pl.Tensor[[M * 2, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]) -> pl.Tensor[[M * 2, N], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c


def test_a_multiple_of_a_dynamic_dim_binds_and_runs():
    run = pl.compile(Doubled, entry="main")
    a, b, c = torch.randn(16, 16), torch.randn(16, 16), torch.zeros(16, 16)
    run(a, b, c)
    assert torch.equal(c, a + b)
    with pytest.raises(ValueError, match=r"dim M\*2 must be a multiple of 2, got 15"):
        run(torch.randn(15, 16), torch.randn(15, 16), torch.zeros(15, 16))
