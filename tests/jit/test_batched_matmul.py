"""Reference forms of batched matmul through `@pl.jit`: a `pl.matmul` / `pl.matmul_acc` of
rank-3 tensors (converted to `tile.batch_matmul` / `tile.batch_matmul_acc`), with `b_trans`
(a transpose of the trailing axes of a rank-3 tile), and `pl.transpose` of any two axes."""

from __future__ import annotations

import torch

import plang as pl


@pl.jit
def batched(a: pl.Tensor[[3, 16, 32], pl.FP32], b: pl.Tensor[[3, 24, 32], pl.FP32],
            c: pl.Tensor[[1, 32, 24], pl.FP32], out: pl.Out[pl.Tensor[[3, 16, 24], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a, b, b_trans=True)  # [3, 16, 32] @ [3, 32, 24]
        out = pl.assemble(out, pl.matmul_acc(acc, a, c), [0, 0, 0])  # + a @ c (c broadcast)
    return out


@pl.jit
def swap_axes(x: pl.Tensor[[2, 3, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 3, 2], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.transpose(x, 0, 2), [0, 0, 0])
    return out


def test_rank3_matmul_and_matmul_acc_match_torch():
    a, b, c = torch.randn(3, 16, 32), torch.randn(3, 24, 32), torch.randn(1, 32, 24)
    out = torch.zeros(3, 16, 24)
    batched(a, b, c, out)
    torch.testing.assert_close(out, a @ b.transpose(1, 2) + a @ c, rtol=1e-5, atol=1e-4)


def test_transpose_of_any_two_axes_matches_torch():
    x, out = torch.randn(2, 3, 8), torch.zeros(8, 3, 2)
    swap_axes(x, out)
    assert torch.equal(out, x.transpose(0, 2))
