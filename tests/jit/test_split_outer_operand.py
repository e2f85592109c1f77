"""Under `pl.split(UP_DOWN / LEFT_RIGHT)` each AIV lane adds its half of a matmul result to
its half of a tile loaded outside the matmul loop (an outer slice read before / after the
cube work, as in the Qwen3 residual projections)."""

import pytest
import torch

import plang as pl

M, K, N, KC = 16, 64, 128, 32


def _kernel(mode):
    @pl.jit
    def residual(a: pl.Tensor, b: pl.Tensor, r: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(mode)]):
            for j in pl.range(0, 2):
                n0 = j * N
                rc = r[:, n0 : n0 + N]
                acc = pl.create_tensor([M, N], dtype=pl.FP32)
                for kb in pl.range(0, K // KC):
                    k0 = kb * KC
                    ac = a[:, k0 : k0 + KC]
                    bc = b[k0 : k0 + KC, n0 : n0 + N]
                    if k0 == 0:
                        acc = pl.matmul(ac, bc, out_dtype=pl.FP32)
                    else:
                        acc = pl.matmul_acc(acc, ac, bc)
                c = pl.assemble(c, pl.add(acc, rc), [0, n0])
        return c
    return residual


@pytest.mark.parametrize("mode", [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT])
def test_matmul_plus_outer_slice_per_lane(mode):
    a = torch.randn(M, K, dtype=torch.bfloat16)
    b = torch.randn(K, 2 * N, dtype=torch.bfloat16)
    r = torch.randn(M, 2 * N + 32)
    c = torch.full((M, 2 * N), float("nan"))
    _kernel(mode)(a, b, r, c)
    torch.testing.assert_close(c, a.float() @ b.float() + r[:, : 2 * N], rtol=1e-2, atol=1e-2)
