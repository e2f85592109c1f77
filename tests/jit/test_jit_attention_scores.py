"""@pl.jit end to end: attention scores softmax(q @ k^T * scale) with `b_trans=True` matmuls
at tensor level (in a core-group region and in a @pl.jit.incore kernel), against torch."""

import pytest
import torch

import plang as pl

SCALE = 0.125


@pl.jit
def scores(q: pl.Tensor, k: pl.Tensor, p: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.mul(pl.matmul(q, k, b_trans=True), SCALE)
        e = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
        p = pl.row_expand_div(e, pl.row_sum(e))
    return p


@pl.jit.incore
def scores_blocks(q: pl.Tensor, k: pl.Tensor, p: pl.Out[pl.Tensor]):
    for r in pl.range(0, pl.tensor.dim(q, 0), 32):
        s = pl.mul(pl.matmul(pl.slice(q, [32, 64], [r, 0]), k, b_trans=True), SCALE)
        e = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
        p = pl.assemble(p, pl.row_expand_div(e, pl.row_sum(e)), [r, 0])
    return p


@pl.jit
def scores_by_blocks(q: pl.Tensor, k: pl.Tensor, p: pl.Out[pl.Tensor]):
    p = scores_blocks(q, k, p)
    return p


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLANG_DISK_CACHE", "0")


def _reference(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return torch.softmax((q.double() @ k.double().T) * SCALE, dim=-1).float()


@pytest.mark.parametrize("rows", [64, 512])  # 512: the [512, 256] scores exceed Vec (row blocks)
def test_scores_in_a_core_group_region(rows):
    q, k, p = torch.randn(rows, 64), torch.randn(256, 64), torch.empty(rows, 256)
    got = scores(q, k, p)
    assert got is p
    torch.testing.assert_close(p, _reference(q, k), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_scores_in_an_incore_kernel_over_row_blocks(dtype):
    q, k, p = torch.randn(96, 64).to(dtype), torch.randn(128, 64).to(dtype), torch.empty(96, 128)
    scores_by_blocks(q, k, p)
    torch.testing.assert_close(p, _reference(q, k), rtol=1e-4, atol=1e-6)
