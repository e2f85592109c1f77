"""The in-memory cache of a `@pl.jit` entry keeps at most `$PLANG_JIT_CACHE_ENTRIES`
specializations, dropping the least recently used."""

import pytest
import torch

import plang as pl
from plang.jit.compiler import COUNTERS
from plang.runtime import RunConfig

UNCACHED = RunConfig(disk_cache=False)


@pl.jit.incore
def square_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 64])
    y = pl.store(pl.mul(t, t), [0, 0], y)
    return y


@pl.jit
def square(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = square_rows(x, y)
    return y


def _compiles_of(rows: int) -> int:
    """Compilations a call of `square` on `rows` rows caused (its result checked)."""
    x, y = torch.randn(rows, 64), torch.zeros(rows, 64)
    before = COUNTERS["compiles"]
    square(x, y, config=UNCACHED)
    torch.testing.assert_close(y[:16], (x * x)[:16])
    return COUNTERS["compiles"] - before


def test_least_recently_used_specializations_are_dropped(monkeypatch):
    monkeypatch.setenv("PLANG_JIT_CACHE_ENTRIES", "2")
    assert [_compiles_of(rows) for rows in (16, 32, 16, 48, 16)] == [1, 1, 0, 1, 0]  # 32 dropped
    assert _compiles_of(32) == 1


def test_a_bad_limit_is_named(monkeypatch):
    monkeypatch.setenv("PLANG_JIT_CACHE_ENTRIES", "none")
    with pytest.raises(ValueError, match="PLANG_JIT_CACHE_ENTRIES must be a positive integer, got 'none'"):
        _compiles_of(64)
