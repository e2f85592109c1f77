"""Reference kernels whose `pl.full` accumulator (a tile in plang's kernels) meets tensor-level
values: `pl.add(acc, pl.matmul(tensor_a, tensor_b))`, `pl.assemble(out, tile, ...)`."""

import pytest
import torch

import plang as pl

K_CHUNK = 32


@pl.program
class MixedAccumulate:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[16, 128], pl.FP32], w: pl.Tensor[[128, 64], pl.FP32],
              r: pl.Tensor[[16, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
        for o in pl.range(2):
            acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
            for kb in pl.range(128 // K_CHUNK):
                a_chunk = pl.slice(a, [16, K_CHUNK], [0, kb * K_CHUNK])
                w_chunk = pl.slice(w, [K_CHUNK, 32], [kb * K_CHUNK, o * 32])
                acc = pl.add(acc, pl.matmul(a_chunk, w_chunk))
            resid = pl.slice(r, [16, 32], [0, o * 32])
            out = pl.assemble(out, pl.add(resid, acc), [0, o * 32])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 128], pl.FP32], w: pl.Tensor[[128, 64], pl.FP32],
             r: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.block(a, w, r, out)
        return out


def test_tile_accumulator_meets_tensor_matmul_and_assemble():
    a, w, r = torch.randn(16, 128), torch.randn(128, 64), torch.randn(16, 64)
    out = torch.zeros(16, 64)
    pl.compile(MixedAccumulate)(a, w, r, out)
    torch.testing.assert_close(out, a @ w + r, rtol=1e-4, atol=1e-4)


def test_a_mixed_op_that_is_wrong_either_way_keeps_its_own_error():
    with pytest.raises(pl.Error, match="tile.add") as info:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16, 64], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
                acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
                acc = pl.add(acc, a)  # [16, 32] + [16, 64]
                return pl.store(acc, [0, 0], out)
    assert "test_kernel_mixed_operands.py:52" in str(info.value)
