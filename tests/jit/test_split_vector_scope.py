"""A vector-only scope split over the AIV lanes (`optimizations=[pl.split(...)]`) runs on every
lane: each lane computes its half, and the whole output is written (it used to run lane 0
only, leaving half of the output unwritten)."""

import pytest
import torch

import plang as pl


@pl.jit
def up_down(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        t = pl.load(a, [0, 0], [64, 128])
        c = pl.store(pl.exp(t), [0, 0], c)
    return c


@pl.jit
def left_right(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        ta = pl.load(a, [0, 0], [32, 256])
        tb = pl.load(b, [0, 0], [32, 256])
        pl.store(pl.mul(pl.add(ta, tb), 0.5), [0, 0], c)
    return c


@pytest.mark.parametrize("rounds", [3])
def test_up_down_writes_every_row(rounds):
    for _ in range(rounds):
        a = torch.randn(64, 128)
        c = torch.full((64, 128), float("nan"))
        up_down(a, c)
        torch.testing.assert_close(c, a.exp())


def test_left_right_writes_every_column():
    a, b = torch.randn(32, 256), torch.randn(32, 256)
    c = torch.full((32, 256), float("nan"))
    left_right(a, b, c)
    torch.testing.assert_close(c, (a + b) * 0.5)


def test_the_split_kernel_runs_as_a_group_of_lanes():
    a = torch.randn(64, 128)
    text = up_down.lower(a, torch.empty_like(a)).as_python()
    assert "@pl.function(type=pl.FunctionType.Group)" in text and "up_down_incore_0_aiv" in text


@pl.jit
def up_down_rows(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        t = pl.load(a, [0, 0], [a.shape[0], 64])
        c = pl.store(pl.add(pl.exp(t), 1.0), [0, 0], c)
    return c


@pytest.mark.parametrize("rows", [1, 17])
def test_up_down_of_an_odd_row_count(rows):
    # each lane takes ceil(rows / 2) rows, lane 1 one short (none of a single row), as the
    # reference halves an odd split axis; every row is written once
    a = torch.randn(rows, 64)
    c = torch.full((rows, 64), float("nan"))
    up_down_rows(a, c)
    torch.testing.assert_close(c, a.exp() + 1)
