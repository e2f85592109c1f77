"""Orchestration-time tensor accesses with runtime offsets are bounds-checked: a `pl.slice`
window starts inside its input; one reaching past its end (which the reference accepts,
exposing the memory that follows) reads as zeros there and is read-only; `pl.read` /
`pl.write` indices lie inside the tensor (a negative one is not Python's count from the end).
Failures are `BoundsError`s at the user's line."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.runtime import BoundsError


@pl.jit.incore
def copy8(a: pl.Tensor[[8, 64], pl.FP32], c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [8, 64])
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def window(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    v = pl.slice(a, [8, 64], [n, 0])
    c = copy8(v, c)
    return c


@pl.jit.incore
def fill8(a: pl.Tensor[[8, 64], pl.FP32], c: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    t = pl.load(a, [0, 0], [8, 64])
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def write_window(a: pl.Tensor, c: pl.Tensor, n: pl.Scalar[pl.INDEX]):
    v = pl.slice(c, [8, 64], [n, 0])
    v = fill8(a, v)
    return c


@pl.jit
def element(a: pl.Tensor, c: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    x = pl.read(a, [i, 0])
    c = pl.write(c, [i, 1], x)
    return c


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_slice_offsets_are_checked_at_run_time() -> None:
    a, c = torch.randn(16, 64), torch.zeros(8, 64)
    run = window.compile(a, c, pl.RUNTIME)
    run(a, c, 8)
    assert torch.equal(c, a[8:])
    with pytest.raises(BoundsError, match=r"tensor.slice out of bounds of its tensor "
                                          r"\(shape \[16, 64\]\) on axis 0: offset -8 is negative") as info:
        run(a, c, -8)
    assert info.value.span.begin_line == _line_of("v = pl.slice(a, [8, 64], [n, 0])")


def test_a_window_past_the_end_reads_zeros_there_and_is_read_only() -> None:
    a, c = torch.randn(16, 64), torch.full((8, 64), 7.0)
    window.compile(a, c, pl.RUNTIME)(a, c, 13)
    assert torch.equal(c[:3], a[13:]) and torch.equal(c[3:], torch.zeros(5, 64))
    small, big = torch.randn(8, 64), torch.zeros(16, 64)
    run = write_window.compile(small, big, pl.RUNTIME)
    run(small, big, 8)
    assert torch.equal(big[8:], small)
    with pytest.raises(BoundsError, match=r"offset 9 \+ extent 8 = 17 exceeds the tensor's extent 16; the "
                                          r"window past the tensor's end is a read-only copy") as info:
        run(small, big, 9)
    assert info.value.span.begin_line == _line_of("v = pl.slice(c, [8, 64], [n, 0])")


def test_element_reads_and_writes_are_checked() -> None:
    a, c = torch.randn(4, 8), torch.zeros(4, 8)
    run = element.compile(a, c, pl.RUNTIME)
    run(a, c, 3)
    assert c[3, 1] == a[3, 0]
    with pytest.raises(BoundsError, match="tensor.read out of bounds of its tensor .* offset -1 is negative"):
        run(a, c, -1)
    with pytest.raises(BoundsError, match=r"tensor.read .* offset 4 \+ extent 1 = 5 exceeds"):
        run(a, c, 4)
