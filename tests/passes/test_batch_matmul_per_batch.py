"""A batched `pl.matmul` whose whole operands are over the Mat buffer runs batch by batch, the
`b_trans` operand read transposed on the cube (its per-batch [N, K] slice is over Vec); the
result matches torch."""

from __future__ import annotations

import torch

import plang as pl

B, M, K, N = 4, 64, 128, 512  # b is 1 MiB (over Mat); one batch of it is 256 KiB (over Vec)


@pl.program
class BatchedBTrans:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, N, K], pl.FP32],
               c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
        cm = pl.matmul(a, b, b_trans=True, out_dtype=pl.FP32)
        return pl.assemble(c, cm, offset=[0, 0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, N, K], pl.FP32],
             c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
        return self.kernel(a, b, c)


def test_an_oversized_batched_b_trans_matmul_runs_batch_by_batch_on_the_cube():
    lowered = pl.passes.PassManager().run(BatchedBTrans)
    kernel = lowered.functions["kernel"]
    assert kernel.func_type is pl.FunctionType.AIC
    assert any(isinstance(s, pl.ir.For) for s in pl.ir.flatten(kernel.body))
    a, b, c = torch.randn(B, M, K), torch.randn(B, N, K), torch.full((B, M, N), float("nan"))
    pl.compile(BatchedBTrans)(a, b, c)
    torch.testing.assert_close(c, a @ b.transpose(-2, -1), rtol=1e-4, atol=1e-4)
