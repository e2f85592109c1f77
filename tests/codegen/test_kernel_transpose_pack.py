"""A matmul whose right operand is the transpose of a DDR load that comes back on every trip
of a loop (attention scores q @ k^T by query blocks): the transpose stays lazy and B is
packed once per call from 16 x 16 blocks of the loaded rows transposed in registers
(`LazyTile.transpose_of`): FP32 elements, BF16 32-bit k pairs where the target has the pair
dot product. A tile the blocks do not cover is gathered down its columns (FP32) or
transposed in the vector buffer (BF16). All against a float64 torch product: BF16
products are exact in FP32, so only the order of the FP32 sums differs."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.target import Isa


def _scores(rows: int, n: int, d: int):
    @pl.jit.incore
    def scores_blocks(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
        for r in pl.range(0, pl.tensor.dim(q, 0), rows):
            kt = pl.slice(k, [n, d], [0, 0])  # the same keys on every trip
            s = pl.assemble(s, pl.matmul(pl.slice(q, [rows, d], [r, 0]), kt, b_trans=True,
                                         out_dtype=pl.FP32), [r, 0])
        return s

    @pl.jit
    def scores(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
        s = scores_blocks(q, k, s)
        return s

    return scores


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLANG_DISK_CACHE", "0")


def _check(q: torch.Tensor, k: torch.Tensor, rows: int = 32) -> None:
    s = torch.empty(q.shape[0], k.shape[0])
    _scores(rows, k.shape[0], k.shape[1])(q, k, s)
    torch.testing.assert_close(s, (q.double() @ k.double().T).float(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("m, n, d, packed", [(128, 128, 64, True), (96, 64, 128, True), (64, 96, 64, True),
                                             (64, 96, 48, False)])
def test_bf16_scores_by_query_blocks(block_packs: list, m: int, n: int, d: int, packed: bool) -> None:
    """[n, d] keys of whole 16 x 32 blocks are pair-packed where the target has the pair dot
    product, 96 keys into panels padded to 128 columns; 48 columns are not whole word blocks
    of 64-lane chunks and take the transposed copy."""
    _check(torch.randn(m, d).to(torch.bfloat16), torch.randn(n, d).to(torch.bfloat16))
    assert bool(block_packs) == (packed and Isa.default().bf16_dot)


@pytest.mark.parametrize("m, n, d, packed", [(128, 128, 64, True), (96, 64, 128, True), (64, 96, 64, True),
                                             (64, 72, 64, False), (48, 32, 40, False)])
def test_fp32_scores_by_query_blocks(block_packs: list, m: int, n: int, d: int, packed: bool) -> None:
    """FP32 keys of whole 16 x 16 blocks are packed by block transposes, also where the
    panels are wide enough to be packed inline (AVX-512's 64 columns; gathers are slow on
    AMD); 72 keys are not whole 16-row blocks, 40 columns not whole 16-column ones: both are
    gathered."""
    _check(torch.randn(m, d), torch.randn(n, d), rows=16)
    assert bool(block_packs) == packed
