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


@pl.jit
def normalize_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    # the row sums go through a [1, 16] row for the reciprocal and back (the reference's
    # rms_norm layout trick): each lane's half follows the reshapes
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        xc = pl.load(x, [0, 0], [16, 64])
        inv_row = pl.recip(pl.reshape(pl.row_sum(xc), [1, 16]))
        y = pl.store(pl.row_expand_mul(xc, pl.reshape(inv_row, [16, 1])), [0, 0], y)
    return y


def test_a_reshape_carries_each_lanes_half():
    x = torch.rand(16, 64) + 0.5
    y = torch.full((16, 64), float("nan"))
    normalize_rows(x, y)
    torch.testing.assert_close(y, x / x.sum(-1, keepdim=True))


@pl.jit
def regroup_columns(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        t = pl.load(x, [0, 0], [4, 64])
        y = pl.store(pl.reshape(pl.exp(t), [8, 32]), [0, 0], y)
    return y


def test_a_reshape_of_column_halves_is_an_error():
    with pytest.raises(pl.errors.Error, match=r"tile.reshape of a LEFT_RIGHT half .*not a contiguous"):
        regroup_columns(torch.randn(4, 64), torch.empty(8, 32))
