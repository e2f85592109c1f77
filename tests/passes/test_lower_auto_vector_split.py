"""LowerAutoVectorSplit: pl.split(mode) on an InCore function becomes split_aiv regions in
which each AIV lane handles half of every tile."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, line_of, parse

from plang.passes import PassError, lower_auto_vector_split

T = "pl.Tensor[[64, 64], pl.FP32]"
B = "pl.Tensor[[64, 64], pl.BF16]"
VEC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"
HALF = "pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec]"
COLS = "pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec]"
ACC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]"
MAT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat]"
LEFT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Left]"
RIGHT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Right]"
MEM = "target_memory=pl.MemorySpace"
UP_DOWN = "@pl.function(type=pl.FunctionType.InCore, attrs={'split': pl.SplitMode.UP_DOWN})"
INCORE = "@pl.function(type=pl.FunctionType.InCore)"
CUBE = f"""
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MEM}.Mat)
                al: {LEFT} = pl.tile.move(at, {MEM}.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                c: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)"""


def test_vector_kernel_lanes_load_and_store_their_half_rows():
    check_pass("lower_auto_vector_split", f"""
        @pl.program
        class P:
            {UP_DOWN}
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                y: {VEC} = pl.tile.exp(xt)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            {INCORE}
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    xt: {HALF} = pl.tile.load(x, [lane * 32, 0], [32, 64], {MEM}.Vec)
                    y: {HALF} = pl.tile.exp(xt)
                    o = pl.tile.store(y, [lane * 32, 0], out)
                return o
    """, ("AutoVectorSplitLowered", "AivSplitValid", "TypeCheck", "UseAfterDef"))


def test_cube_result_enters_through_aiv_shard():
    check_pass("lower_auto_vector_split", f"""
        @pl.program
        class P:
            {UP_DOWN}
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE}
                cv: {VEC} = pl.tile.move(c, {MEM}.Vec)
                r: {VEC} = pl.tile.relu(cv)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            {INCORE}
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE}
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    cv: {HALF} = pl.tile.aiv_shard(c, mode=pl.SplitMode.UP_DOWN)
                    r: {HALF} = pl.tile.relu(cv)
                    o = pl.tile.store(r, [lane * 32, 0], out)
                return o
    """, ("AivSplitValid",))


def test_region_result_read_by_cube_leaves_through_aic_gather_in_a_loop():
    check_pass("lower_auto_vector_split", f"""
        @pl.program
        class P:
            {UP_DOWN}
            def k(self, a: {B}, b: {B}, x: {T}, out: pl.Out[{T}]) -> {T}:
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                for i, (o,) in pl.range(2, init_values=(out,)):
                    xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                    h: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.cast(xt, target_type=pl.BF16)
                    hl: {LEFT} = pl.tile.move(h, {MEM}.Left)
                    c: {ACC} = pl.tile.matmul(hl, br, out_dtype=pl.FP32)
                    o2 = pl.tile.store(c, [0, 0], o)
                    r = pl.yield_(o2)
                return r
    """, f"""
        @pl.program
        class P:
            {INCORE}
            def k(self, a: {B}, b: {B}, x: {T}, out: pl.Out[{T}]) -> {T}:
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                for i, (o,) in pl.range(2, init_values=(out,)):
                    for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                        xt: {HALF} = pl.tile.load(x, [lane * 32, 0], [32, 64], {MEM}.Vec)
                        h: pl.Tile[[32, 64], pl.BF16, pl.Mem.Vec] = pl.tile.cast(xt, target_type=pl.BF16)
                        hg: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.aic_gather(
                            h, mode=pl.SplitMode.UP_DOWN)
                    hl: {LEFT} = pl.tile.move(hg, {MEM}.Left)
                    c: {ACC} = pl.tile.matmul(hl, br, out_dtype=pl.FP32)
                    o2 = pl.tile.store(c, [0, 0], o)
                    r = pl.yield_(o2)
                return r
    """, ("AivSplitValid",))


def test_left_right_halves_columns_and_carried_state():
    check_pass("lower_auto_vector_split", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore, attrs={{'split': pl.SplitMode.LEFT_RIGHT}})
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                z: {VEC} = pl.tile.full([64, 64], pl.FP32, 0.0, {MEM}.Vec)
                for i, (acc,) in pl.range(2, init_values=(z,)):
                    xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                    acc2: {VEC} = pl.tile.add(acc, xt)
                    r = pl.yield_(acc2)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            {INCORE}
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                    z: {COLS} = pl.tile.full([64, 32], pl.FP32, 0.0, {MEM}.Vec)
                    for i, (acc,) in pl.range(2, init_values=(z,)):
                        xt: {COLS} = pl.tile.load(x, [0, lane * 32], [64, 32], {MEM}.Vec)
                        acc2: {COLS} = pl.tile.add(acc, xt)
                        r = pl.yield_(acc2)
                    o = pl.tile.store(r, [0, lane * 32], out)
                return o
    """)


def test_split_none_only_drops_the_attribute():
    body = f"""
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                o = pl.tile.store(xt, [0, 0], out)
                return o
    """
    check_pass("lower_auto_vector_split", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore, attrs={{'split': pl.SplitMode.NONE}}){body}""", f"""
        @pl.program
        class P:
            {INCORE}{body}""")


def test_reduction_across_the_split_axis_is_an_error():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore, attrs={{'split': pl.SplitMode.LEFT_RIGHT}})
            def k(self, x: {T}, out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                tmp: {VEC} = pl.tile.create([64, 64], dtype=pl.FP32, {MEM}.Vec)
                s: pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(xt, tmp)
                o = pl.tile.store(s, [0, 0], out)
                return o
    """
    with pytest.raises(PassError) as err:
        lower_auto_vector_split()(parse(src))
    assert "tile.row_sum reduces across the LEFT_RIGHT split axis" in err.value.message
    assert err.value.line == line_of(src, "pl.tile.row_sum")


def test_loop_carried_cube_result_and_outer_load_enter_halved():
    # the matmul result leaves its loop as a return var (not an Assign): its move to Vec is
    # still the cube boundary, so both add operands are the lane's half
    check_pass("lower_auto_vector_split", f"""
        @pl.program
        class P:
            {UP_DOWN}
            def k(self, a: {B}, b: {B}, r: {T}, out: pl.Out[{T}]) -> {T}:
                rt: {VEC} = pl.tile.load(r, [0, 0], [64, 64], {MEM}.Vec)
                c0: {ACC} = pl.tile.create([64, 64], dtype=pl.FP32, {MEM}.Acc)
                for i, (acc,) in pl.range(2, init_values=(c0,)):{CUBE.replace(chr(10), chr(10) + '    ')}
                    acc_1: {ACC} = pl.yield_(c)
                cv: {VEC} = pl.tile.move(acc_1, {MEM}.Vec)
                s: {VEC} = pl.tile.add(cv, rt)
                o = pl.tile.store(s, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            {INCORE}
            def k(self, a: {B}, b: {B}, r: {T}, out: pl.Out[{T}]) -> {T}:
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    rt: {HALF} = pl.tile.load(r, [lane * 32, 0], [32, 64], {MEM}.Vec)
                c0: {ACC} = pl.tile.create([64, 64], dtype=pl.FP32, {MEM}.Acc)
                for i, (acc,) in pl.range(2, init_values=(c0,)):{CUBE.replace(chr(10), chr(10) + '    ')}
                    acc_1: {ACC} = pl.yield_(c)
                for lane_1 in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    cv: {HALF} = pl.tile.aiv_shard(acc_1, mode=pl.SplitMode.UP_DOWN)
                    s: {HALF} = pl.tile.add(cv, rt)
                    o = pl.tile.store(s, [lane_1 * 32, 0], out)
                return o
    """, ("AivSplitValid", "TypeCheck"))
