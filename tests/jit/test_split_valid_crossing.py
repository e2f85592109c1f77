"""A cube tile crossing to the split AIV lanes keeps its valid region: each lane holds its
share of it (`min(max(valid - lane * half, 0), half)` on the split axis), so a store writes
exactly the valid region, as in the reference; an odd extent halves with lane 1 one short."""

import pytest
import torch

import plang as pl

UP_DOWN, LEFT_RIGHT = pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT


def make_matmul_exp(mode, m, n, valid_rows, valid_cols):
    @pl.jit
    def matmul_exp(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(mode)]):
            ta = pl.load(a, [0, 0], [m, 32], valid_shape=[valid_rows, 32])
            tb = pl.load(b, [0, 0], [32, n], valid_shape=[32, valid_cols])
            c = pl.store(pl.exp(pl.matmul(ta, tb)), [0, 0], c)
        return c

    return matmul_exp


@pytest.mark.parametrize("mode, m, n, valid_rows, valid_cols", [
    (UP_DOWN, 16, 16, 13, 16),   # lane 1 holds 5 of its 8 rows
    (UP_DOWN, 16, 16, 5, 16),    # lane 1 holds none
    (UP_DOWN, 16, 16, 13, 11),   # narrowed on both axes
    (LEFT_RIGHT, 16, 16, 16, 11),
    (LEFT_RIGHT, 16, 32, 9, 20),
    (UP_DOWN, 15, 16, 15, 16),   # odd extent: lanes of 8 and 7 rows
    (UP_DOWN, 15, 16, 12, 16),
    (LEFT_RIGHT, 16, 15, 16, 15),
])
def test_a_narrowed_product_stores_its_valid_region(mode, m, n, valid_rows, valid_cols):
    kernel = make_matmul_exp(mode, m, n, valid_rows, valid_cols)
    a, b = torch.randn(valid_rows, 32) * 0.1, torch.randn(32, valid_cols) * 0.1
    c = torch.full((m, n), float("nan"))
    kernel(a, b, c)
    expect = torch.full((m, n), float("nan"))
    expect[:valid_rows, :valid_cols] = (a @ b).exp()
    torch.testing.assert_close(c, expect, equal_nan=True)


@pl.jit
def matmul_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(UP_DOWN)]):
        ta = pl.load(a, [0, 0], [16, 32], valid_shape=[rows, 32])
        tb = pl.load(b, [0, 0], [32, 16])
        c = pl.store(pl.add(pl.matmul(ta, tb), 1.0), [0, 0], c)
    return c


@pytest.mark.parametrize("rows", [16, 9, 8, 3])
def test_a_runtime_valid_extent_reaches_each_lane(rows):
    a, b = torch.randn(16, 32), torch.randn(32, 16)
    c = torch.full((16, 16), float("nan"))
    matmul_rows(a, b, c, rows)
    expect = torch.full((16, 16), float("nan"))
    expect[:rows] = a[:rows] @ b + 1
    torch.testing.assert_close(c, expect, equal_nan=True)


@pl.jit
def hand_split_odd(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [15, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
        mm = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                       pl.move(tb, target_memory=pl.MemorySpace.Right))
        for lane in pl.split_aiv(2, mode=UP_DOWN):
            half = pl.aiv_shard(mm)
            c = pl.store(pl.exp(half), [lane * 8, 0], c)
    return c


def test_an_explicit_shard_of_an_odd_extent():
    a, b = torch.randn(15, 32) * 0.1, torch.randn(32, 16) * 0.1
    c = torch.full((15, 16), float("nan"))
    hand_split_odd(a, b, c)
    torch.testing.assert_close(c, (a @ b).exp())


def test_the_lane_share_is_in_the_printed_ir():
    # (every pass's output also parses back equal: tests/conftest.py checks all IR)
    kernel = make_matmul_exp(UP_DOWN, 16, 16, 13, 16)
    text = kernel.lower(torch.randn(13, 32), torch.randn(32, 16), torch.empty(16, 16)).as_python()
    assert "pl.TileView(valid_shape=[lane_valid, 16])] = pl.tile.tpop_from_aic(split=1)" in text


def make_exp_matmul(rows):
    @pl.jit
    def exp_matmul(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(UP_DOWN)]):
            x = pl.load(a, [0, 0], [16, 32], valid_shape=[rows, 32])
            tw = pl.load(w, [0, 0], [32, 16])
            c = pl.store(pl.matmul(pl.exp(x), tw), [0, 0], c)
        return c

    return exp_matmul


@pytest.mark.parametrize("rows", [13, 5, 16])
def test_a_narrowed_vector_tile_reaches_the_cube_with_its_valid_region(rows):
    # each lane loads its share of the valid rows; the cube's gathered tile is valid on
    # all of them (lane 0's and lane 1's together), so the product stores `rows` rows
    a, w = torch.randn(rows, 32) * 0.1, torch.randn(32, 16) * 0.1
    c = torch.full((16, 16), float("nan"))
    make_exp_matmul(rows)(a, w, c)
    expect = torch.full((16, 16), float("nan"))
    expect[:rows] = a.exp() @ w
    torch.testing.assert_close(c, expect, equal_nan=True)


@pl.jit
def hand_split_round_trip(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32], valid_shape=[13, 32], target_memory=pl.MemorySpace.Mat)
        tw = pl.load(w, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        mm = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                       pl.move(tw, target_memory=pl.MemorySpace.Right))
        for lane in pl.split_aiv(2, mode=UP_DOWN):
            back = pl.aic_gather(pl.exp(pl.aiv_shard(mm)))
        res = pl.matmul(pl.move(back, target_memory=pl.MemorySpace.Left),
                        pl.move(tw, target_memory=pl.MemorySpace.Right))
        c = pl.store(res, [0, 0], c)
    return c


def test_a_hand_split_round_trip_rejoins_the_lanes_shares():
    # the lanes hold 8 and 5 of the 13 valid rows; the cube's rejoined tile is valid on all
    # 13 (not twice a lane's rounded-up share, 14), so the second product stores 13 rows
    a, w = torch.randn(13, 32) * 0.1, torch.randn(32, 32) * 0.1
    c = torch.full((16, 32), float("nan"))
    hand_split_round_trip(a, w, c)
    expect = torch.full((16, 32), float("nan"))
    expect[:13] = (a @ w).exp() @ w
    torch.testing.assert_close(c, expect, equal_nan=True, rtol=1e-4, atol=1e-4)
