"""@pl.jit end to end: tensor matmuls larger than the cube's buffers are tiled over M, N and K
by the compiler (straight into DDR, through an on-chip cast scratch into a second matmul,
K only), and an Acc -> Mat `tile.assemble` runs on the cube; all against torch."""

import pytest
import torch

import plang as pl
from plang.runtime import RunConfig


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLANG_DISK_CACHE", "0")


@pl.jit
def to_ddr(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, c, [0, 0])
    return out


@pl.jit
def chained(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pl.jit
def acc_into_mat(x: pl.Tensor, a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tx = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        ta = pl.move(pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        r = pl.tile.assemble(tx, pl.matmul(ta, tb), [0, 16])
        pl.store(pl.move(r, target_memory=pl.MemorySpace.Vec), [0, 0], y)
    return y


@pytest.mark.parametrize("M, K, N", [(256, 128, 256), (512, 64, 128), (128, 1024, 64)])
def test_an_oversized_matmul_stored_to_ddr_matches_torch(M, K, N):
    torch.manual_seed(0)
    a, b = torch.randn(M, K), torch.randn(K, N)
    out = torch.zeros(M, N)
    to_ddr(a, b, out)
    torch.testing.assert_close(out, a @ b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("M, K", [(256, 192), (128, 512)])
def test_a_chained_matmul_keeps_a_bf16_intermediate_like_the_reference(M, K):
    torch.manual_seed(1)
    a = torch.randn(M, K, dtype=torch.bfloat16)
    b = torch.randn(K, M, dtype=torch.bfloat16)
    e = torch.randn(M, 64, dtype=torch.bfloat16)
    out = torch.zeros(M, 64)
    chained(a, b, e, out)
    golden = (a.float() @ b.float()).to(torch.bfloat16).float() @ e.float()
    assert ((out - golden).norm() / golden.norm()).item() < 1e-3


def test_a_platform_with_smaller_buffers_still_gets_the_right_product():
    torch.manual_seed(2)
    a, b = torch.randn(256, 128), torch.randn(128, 256)
    out = torch.zeros(256, 256)
    to_ddr(a, b, out, config=RunConfig(platform="a2a3sim"))
    torch.testing.assert_close(out, a @ b, rtol=1e-3, atol=1e-3)


def test_an_accumulator_assembled_into_a_mat_tile_matches_torch():
    torch.manual_seed(3)
    x, a, b = torch.randn(32, 32), torch.randn(32, 16), torch.randn(16, 16)
    y = torch.zeros(32, 32)
    acc_into_mat(x, a, b, y)
    expected = x.clone()
    expected[:, 16:] = a @ b
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)
    aic = next(f for n, f in acc_into_mat.lower(x, a, b, y).functions.items() if n.endswith("_aic"))
    assert "pl.tile.assemble(" in aic.as_python()
