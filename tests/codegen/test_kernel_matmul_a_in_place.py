"""A matmul's left operand fused from a 2-D DDR load is read by the micro-kernel where it lies
in the tensor (no tile copy) when the whole tile is inside it: FP32, and BF16 where the target
has the pair dot product. A clamped load, or one that fails its bounds check, is read from a
tile buffer as before. Results against a float64 torch product."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.codegen.kernel import lower_matmul
from plang.runtime import TaskError
from plang.target import Isa


@pl.jit.incore
def strips_kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], col: pl.Scalar[pl.INDEX]):
    for i in pl.range(0, pl.tensor.dim(c, 0), 32):
        c = pl.store(pl.matmul(pl.load(a, [i, col], [32, 64]), pl.load(b, [0, 0], [64, 64]),
                               out_dtype=pl.FP32), [i, 0], c)
    return c


@pl.jit
def strips(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], col: pl.Scalar[pl.INDEX]):
    c = strips_kernel(a, b, c, col)
    return c


@pl.jit.incore
def clamped_kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = pl.store(pl.matmul(pl.load(a, [0, 0], [32, 64], clamp=True), pl.load(b, [0, 0], [64, 64]),
                           out_dtype=pl.FP32), [0, 0], c)
    return c


@pl.jit
def clamped(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = clamped_kernel(a, b, c)
    return c


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLANG_DISK_CACHE", "0")


@pytest.fixture
def in_place(monkeypatch) -> list[bool]:
    """Whether each matmul lowered reads its A in place."""
    seen = []
    place = lower_matmul._Operands._place_a

    def spy(self, a):
        buf = place(self, a)
        seen.append(self.a_at is not None)
        return buf
    monkeypatch.setattr(lower_matmul._Operands, "_place_a", spy)
    return seen


def _reads_in_place(dtype: torch.dtype) -> bool:
    return dtype is torch.float32 or Isa.default().bf16_dot


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_read_in_place_from_a_strided_view(in_place: list[bool], dtype: torch.dtype) -> None:
    """A's tiles at a run-time column offset of a column slice of a wider tensor (its row pitch
    is the wide tensor's): every strip matches torch."""
    wide, b = torch.randn(96, 200).to(dtype), torch.randn(64, 64).to(dtype)
    a, c = wide[:, 24:152], torch.empty(96, 64)
    strips(a, b, c, 40)
    torch.testing.assert_close(c, (a[:, 40:104].double() @ b.double()).float(), rtol=1e-5, atol=1e-4)
    assert in_place == [_reads_in_place(dtype)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_clamped_a_past_the_end_reads_zeros_not_the_memory_after_it(in_place: list[bool],
                                                                     dtype: torch.dtype) -> None:
    """The first 16 rows of a larger tensor, loaded as a clamped 32-row tile: rows past the
    view are zero in the product (read in place, they would be the rows after it)."""
    big, b = torch.randn(64, 64).to(dtype) + 1, torch.randn(64, 64).to(dtype)
    c = torch.full((32, 64), 7.0)
    clamped(big[:16], b, c)
    want = torch.zeros(32, 64, dtype=torch.float64)
    want[:16] = big[:16].double() @ b.double()
    torch.testing.assert_close(c, want.float(), rtol=1e-5, atol=1e-4)
    assert in_place == [False]


def test_a_load_out_of_bounds_still_raises() -> None:
    """A tile running past the tensor's columns fails its bounds check, writing nothing."""
    a, b, c = torch.randn(64, 96), torch.randn(64, 64), torch.zeros(64, 64)
    with pytest.raises(TaskError, match=r"tile.load out of bounds of tensor 'a' .* on axis 1"):
        strips(a, b, c, 40)
    assert not c.any()
