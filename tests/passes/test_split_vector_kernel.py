"""SplitVectorKernel: a hand-written AIV kernel declaring a split, written at the full tile
shape, becomes per-lane code (half tiles, lane-local valid extents and store offsets)."""

from __future__ import annotations

import pytest
import torch
from pass_testing import check_pass, line_of, parse

import plang as pl
from plang.passes import PassError, split_vector_kernel

T = "pl.Tensor[[16, 16], pl.FP32]"
IDX = "pl.Scalar[pl.INDEX]"
MEM = "target_memory=pl.MemorySpace"
VEC = "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]"
COLS = "pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]"
FULL_VALID = "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[vr, vc])]"
LANE_VALID = "pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[lane_valid, vc])]"


def test_full_shape_pop_becomes_the_lanes_half_with_its_valid_share():
    check_pass("split_vector_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV, attrs={{"split": pl.SplitMode.UP_DOWN}})
            def v(self, out: pl.Out[{T}], vr: {IDX}, vc: {IDX}) -> {T}:
                t: {FULL_VALID} = pl.tile.tpop_from_aic(split=1)
                y: {FULL_VALID} = pl.tile.exp(t)
                pl.tile.tfree_to_aic(t)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV, attrs={{"split_aiv": True}})
            def v(self, out: pl.Out[{T}], vr: {IDX}, vc: {IDX}) -> {T}:
                lane: {IDX} = pl.tile.get_subblock_idx()
                lane_valid: {IDX} = pl.min(pl.max(vr - lane * 8, 0), 8)
                t: {LANE_VALID} = pl.tile.tpop_from_aic(split=1)
                y: {LANE_VALID} = pl.tile.exp(t)
                pl.tile.tfree_to_aic(t)
                o = pl.tile.store(y, [lane * 8, 0], out)
                return o
    """, ("TypeCheck", "UseAfterDef"))


def test_split_inferred_from_pipe_codes_halves_loads_on_columns():
    check_pass("split_vector_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def v(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                t: {VEC} = pl.tile.tpop_from_aic(split=2)
                xt: {VEC} = pl.tile.load(x, [0, 0], [16, 16], {MEM}.Vec)
                y: {VEC} = pl.tile.add(t, xt)
                pl.tile.tfree_to_aic(t)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV, attrs={{"split_aiv": True}})
            def v(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                lane: {IDX} = pl.tile.get_subblock_idx()
                t: {COLS} = pl.tile.tpop_from_aic(split=2)
                xt: {COLS} = pl.tile.load(x, [0, lane * 8], [16, 8], {MEM}.Vec)
                y: {COLS} = pl.tile.add(t, xt)
                pl.tile.tfree_to_aic(t)
                o = pl.tile.store(y, [0, lane * 8], out)
                return o
    """, ("TypeCheck",))


def test_a_reshape_of_a_row_half_halves_the_targets_leading_axis():
    def kernel(attrs: str, rows: int, head: str = "", row0: str = "0") -> str:
        tile = lambda r, c: f"pl.Tile[[{r}, {c}], pl.FP32, pl.Mem.Vec]"  # noqa: E731
        return f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV, attrs={{{attrs}}})
            def v(self, out: pl.Out[{T}]) -> {T}:{head}
                t: {tile(rows, 16)} = pl.tile.tpop_from_aic(split=1)
                s: {tile(rows, 1)} = pl.tile.row_sum(t)
                r: {tile(1, rows)} = pl.tile.reshape(s, [1, {rows}])
                c: {tile(rows, 1)} = pl.tile.reshape(pl.tile.recip(r), [{rows}, 1])
                y: {tile(rows, 16)} = pl.tile.row_expand_mul(t, c)
                pl.tile.tfree_to_aic(t)
                o = pl.tile.store(y, [{row0}, 0], out)
                return o
    """

    lane = f"\n                lane: {IDX} = pl.tile.get_subblock_idx()"
    check_pass("split_vector_kernel", kernel('"split": pl.SplitMode.UP_DOWN', 16),
               kernel('"split_aiv": True', 8, lane, "lane * 8"), ("TypeCheck",))


def test_reduction_across_the_split_axis_is_a_located_error():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV, attrs={{"split": pl.SplitMode.UP_DOWN}})
            def v(self, out: pl.Out[pl.Tensor[[1, 16], pl.FP32]]) -> pl.Tensor[[1, 16], pl.FP32]:
                t: {VEC} = pl.tile.tpop_from_aic(split=1)
                s: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.col_sum(t)
                o = pl.tile.store(s, [0, 0], out)
                return o
    """
    with pytest.raises(PassError, match="tile.col_sum in split UP_DOWN kernel 'v'") as e:
        split_vector_kernel()(parse(src))
    assert e.value.span.begin_line == line_of(src, "col_sum")


def test_pipe_codes_disagreeing_with_the_declared_split_are_an_error():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV, attrs={{"split": pl.SplitMode.UP_DOWN}})
            def v(self, out: pl.Out[{T}]) -> {T}:
                t: {VEC} = pl.tile.tpop_from_aic(split=2)
                o = pl.tile.store(t, [0, 0], out)
                return o
    """
    with pytest.raises(PassError, match="declared split UP_DOWN but this pipe op uses a LEFT_RIGHT"):
        split_vector_kernel()(parse(src))


def _program(mode: pl.SplitMode, code: int):
    @pl.program
    class StandaloneSplit:
        @pl.function(type=pl.FunctionType.AIC, attrs={"split": mode})
        def cube(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]):
            am: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 16],
                                                                target_memory=pl.MemorySpace.Mat)
            bm: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(b, [0, 0], [16, 16],
                                                                target_memory=pl.MemorySpace.Mat)
            al: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.move(am, target_memory=pl.MemorySpace.Left)
            br: pl.Tile[[16, 16], pl.FP32, pl.Mem.Right] = pl.move(bm, target_memory=pl.MemorySpace.Right)
            acc: pl.Tile[[16, 16], pl.FP32] = pl.matmul(al, br)
            pl.tpush_to_aiv(acc, split=code)

        @pl.function(type=pl.FunctionType.AIV, attrs={"split": mode})
        def vec(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], vr: pl.Scalar[pl.INDEX],
                vc: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[vr, vc])] = \
                pl.tpop_from_aic(split=code)
            x: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])
            y: pl.Tile[[16, 16], pl.FP32] = pl.add(t, x)
            pl.tfree_to_aic(t)
            return pl.store(y, [0, 0], out)

        @pl.function(type=pl.FunctionType.Group, attrs={"split": mode})
        def group(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], vr: pl.Scalar[pl.INDEX],
                  vc: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(a, b, out, vr, vc)
            return self.vec(a, b, out, vr, vc)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 vs: pl.Tensor[[2], pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            vr: pl.Scalar[pl.INDEX] = pl.tensor.read(vs, [0])
            vc: pl.Scalar[pl.INDEX] = pl.tensor.read(vs, [1])
            return self.group(a, b, out, vr, vc)

    return StandaloneSplit


@pytest.mark.parametrize("mode, code", [(pl.SplitMode.UP_DOWN, 1), (pl.SplitMode.LEFT_RIGHT, 2)])
@pytest.mark.parametrize("vr, vc", [(16, 16), (5, 12), (11, 3)])
def test_standalone_split_kernels_write_exactly_the_valid_region(mode, code, vr, vc):
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    out = torch.full((16, 16), -7.0)
    compiled = pl.compile(_program(mode, code))
    compiled(a, b, torch.tensor([vr, vc], dtype=torch.int64), out)
    expect = torch.full((16, 16), -7.0)
    expect[:vr, :vc] = (a @ b + a)[:vr, :vc]
    torch.testing.assert_close(out, expect, rtol=1e-4, atol=1e-4)
