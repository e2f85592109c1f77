"""A BF16 matmul whose right operand is the transpose of a DDR load that comes back on every
trip of a loop (attention scores q @ k^T by query blocks): on a target with the pair dot
product the transpose stays lazy and B is packed once per call by 32-bit word-block
transposes of the loaded rows (`LazyTile.pair_source`); elsewhere, or for a tile the blocks
do not cover, it is transposed in the vector buffer. Both against a float64 torch product:
BF16 products are exact in FP32, so only the order of the FP32 sums differs."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.codegen.kernel import lower_matmul
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


@pytest.mark.parametrize("m, n, d, packed", [(128, 128, 64, True), (96, 64, 128, True), (64, 96, 64, True),
                                             (64, 96, 48, False)])
def test_bf16_scores_by_query_blocks(monkeypatch, m: int, n: int, d: int, packed: bool) -> None:
    """[n, d] keys of whole 16 x 32 blocks are pair-packed where the target has the pair dot
    product (a spy counts the packing), 96 keys into panels padded to 128 columns; 48
    columns are not whole word blocks of 64-lane chunks and take the transposed copy."""
    calls = []
    pack = lower_matmul._Operands._pack_pairs
    monkeypatch.setattr(lower_matmul._Operands, "_pack_pairs",
                        lambda self, src: (calls.append(src), pack(self, src)))
    q, k = torch.randn(m, d).to(torch.bfloat16), torch.randn(n, d).to(torch.bfloat16)
    s = torch.empty(m, n)
    _scores(32, n, d)(q, k, s)
    torch.testing.assert_close(s, (q.double() @ k.double().T).float(), rtol=1e-5, atol=1e-4)
    assert bool(calls) == (packed and Isa.default().bf16_dot)
