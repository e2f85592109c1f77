"""ExpandMixedKernel: InCore functions become AIV / AIC kernels, or AIC + AIV + Group joined
by tpush / tpop / tfree on the core group's pipe."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, line_of, parse

from plang.passes import PassError, expand_mixed_kernel

T = "pl.Tensor[[64, 64], pl.FP32]"
B = "pl.Tensor[[64, 64], pl.BF16]"
VEC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"
ACC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]"
MAT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat]"
LEFT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Left]"
RIGHT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Right]"
HALF = "pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec]"
MEM = "target_memory=pl.MemorySpace"
CUBE_PROLOGUE = f"""
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MEM}.Mat)
                al: {LEFT} = pl.tile.move(at, {MEM}.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                c: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)"""


def test_vector_only_kernel_becomes_aiv():
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                y: {VEC} = pl.tile.exp(xt)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {MEM}.Vec)
                y: {VEC} = pl.tile.exp(xt)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, ("MixedKernelExpanded", "TypeCheck", "UseAfterDef"))


def test_cube_only_kernel_becomes_aic():
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE_PROLOGUE}
                o = pl.tile.store(c, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE_PROLOGUE}
                o = pl.tile.store(c, [0, 0], out)
                return o
    """)


def test_mixed_kernel_splits_with_a_crossing_at_the_move_to_vec():
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE_PROLOGUE}
                cv: {VEC} = pl.tile.move(c, {MEM}.Vec)
                r: {VEC} = pl.tile.relu(cv)
                o = pl.tile.store(r, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                o = self.k(a, b, out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k_aic(self, a: {B}, b: {B}, out: pl.Out[{T}]):{CUBE_PROLOGUE}
                pl.tile.tpush_to_aiv(c, split=0)

            @pl.function(type=pl.FunctionType.AIV)
            def k_aiv(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                cv: {VEC} = pl.tile.tpop_from_aic(shape=[64, 64], dtype=pl.FP32)
                r: {VEC} = pl.tile.relu(cv)
                pl.tile.tfree_to_aic(cv)
                o = pl.tile.store(r, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Group)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                self.k_aic(a, b, out)
                r = self.k_aiv(a, b, out)
                return r

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                o = self.k(a, b, out)
                return o
    """)


def test_loop_with_crossings_both_ways_keeps_each_sides_carried_values():
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MEM}.Mat)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                s0: {VEC} = pl.tile.load(out, [0, 0], [64, 64], {MEM}.Vec)
                for i, (lhs, s) in pl.range(2, init_values=(at, s0)):
                    ll: {LEFT} = pl.tile.move(lhs, {MEM}.Left)
                    c: {ACC} = pl.tile.matmul(ll, br, out_dtype=pl.FP32)
                    cv: {VEC} = pl.tile.move(c, {MEM}.Vec)
                    s2: {VEC} = pl.tile.add(s, cv)
                    h: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.cast(s2, target_type=pl.BF16)
                    hm: {MAT} = pl.tile.move(h, {MEM}.Mat)
                    lhs2, s3 = pl.yield_(hm, s2)
                o = pl.tile.store(s3, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k_aic(self, a: {B}, b: {B}, out: pl.Out[{T}]):
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MEM}.Mat)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                for i, (lhs,) in pl.range(2, init_values=(at,)):
                    ll: {LEFT} = pl.tile.move(lhs, {MEM}.Left)
                    c: {ACC} = pl.tile.matmul(ll, br, out_dtype=pl.FP32)
                    pl.tile.tpush_to_aiv(c, split=0)
                    h: {MAT} = pl.tile.tpop_from_aiv(shape=[64, 64], dtype=pl.BF16)
                    hm: {MAT} = pl.tile.move(h, {MEM}.Mat)
                    pl.tile.tfree_to_aiv(h)
                    lhs2 = pl.yield_(hm)

            @pl.function(type=pl.FunctionType.AIV)
            def k_aiv(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                s0: {VEC} = pl.tile.load(out, [0, 0], [64, 64], {MEM}.Vec)
                for i, (s,) in pl.range(2, init_values=(s0,)):
                    cv: {VEC} = pl.tile.tpop_from_aic(shape=[64, 64], dtype=pl.FP32)
                    s2: {VEC} = pl.tile.add(s, cv)
                    pl.tile.tfree_to_aic(cv)
                    h: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.cast(s2, target_type=pl.BF16)
                    pl.tile.tpush_to_aic(h, split=0)
                    s3 = pl.yield_(s2)
                o = pl.tile.store(s3, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Group)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                self.k_aic(a, b, out)
                r = self.k_aiv(a, b, out)
                return r
    """)


def test_split_region_named_crossings_and_lane_index():
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE_PROLOGUE}
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    half: {HALF} = pl.tile.aiv_shard(c, mode=pl.SplitMode.UP_DOWN)
                    e: {HALF} = pl.tile.exp(half)
                    o = pl.tile.store(e, [lane * 32, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k_aic(self, a: {B}, b: {B}, out: pl.Out[{T}]):{CUBE_PROLOGUE}
                pl.tile.tpush_to_aiv(c, split=1)

            @pl.function(type=pl.FunctionType.AIV)
            def k_aiv(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                lane = pl.tile.get_subblock_idx()
                half: {HALF} = pl.tile.tpop_from_aic(shape=[32, 64], dtype=pl.FP32, split=1)
                e: {HALF} = pl.tile.exp(half)
                pl.tile.tfree_to_aic(half)
                o = pl.tile.store(e, [lane * 32, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Group)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                self.k_aic(a, b, out)
                r = self.k_aiv(a, b, out)
                return r
    """)


def test_each_crossing_gets_its_own_pipe_and_cube_frees_carry_the_split():
    # two cube -> vector tiles use pipes 0 and 1 (so tiles of different sizes never share a
    # ring); the cube frees both lanes' halves of the gathered tile, so its free names the split
    hb = "pl.Tile[[32, 64], pl.BF16, pl.Mem.Vec]"
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE_PROLOGUE}
                d: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    hc: {HALF} = pl.tile.aiv_shard(c, mode=pl.SplitMode.UP_DOWN)
                    hd: {HALF} = pl.tile.aiv_shard(d, mode=pl.SplitMode.UP_DOWN)
                    e: {HALF} = pl.tile.add(hc, hd)
                    eb: {hb} = pl.tile.cast(e, target_type=pl.BF16)
                    g: {MAT} = pl.tile.aic_gather(eb, mode=pl.SplitMode.UP_DOWN)
                gl: {LEFT} = pl.tile.move(g, {MEM}.Left)
                f: {ACC} = pl.tile.matmul(gl, br, out_dtype=pl.FP32)
                o = pl.tile.store(f, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k_aic(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:{CUBE_PROLOGUE}
                d: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                pl.tile.tpush_to_aiv(c, split=1)
                pl.tile.tpush_to_aiv(d, split=1, id=1)
                g: {MAT} = pl.tile.tpop_from_aiv(shape=[64, 64], dtype=pl.BF16, split=1)
                gl: {LEFT} = pl.tile.move(g, {MEM}.Left)
                pl.tile.tfree_to_aiv(g, split=1)
                f: {ACC} = pl.tile.matmul(gl, br, out_dtype=pl.FP32)
                o = pl.tile.store(f, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.AIV)
            def k_aiv(self, a: {B}, b: {B}, out: pl.Out[{T}]):
                lane = pl.tile.get_subblock_idx()
                hc: {HALF} = pl.tile.tpop_from_aic(shape=[32, 64], dtype=pl.FP32, split=1)
                hd: {HALF} = pl.tile.tpop_from_aic(shape=[32, 64], dtype=pl.FP32, split=1, id=1)
                e: {HALF} = pl.tile.add(hc, hd)
                pl.tile.tfree_to_aic(hd, id=1)
                pl.tile.tfree_to_aic(hc)
                eb: {hb} = pl.tile.cast(e, target_type=pl.BF16)
                pl.tile.tpush_to_aic(eb, split=1)

            @pl.function(type=pl.FunctionType.Group)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                r = self.k_aic(a, b, out)
                self.k_aiv(a, b, out)
                return r
    """)


def test_types_follow_the_fresh_vars_they_mention():
    # the valid extent `rows` is re-bound in the kernel; the tile types must name the new Var
    DYN = "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[rows, 64])]"
    kernel = f"""
            def k(self, x: {T}, n: pl.Scalar[pl.INDEX], out: pl.Out[{T}]) -> {T}:
                rows: pl.Scalar[pl.INDEX] = pl.min(n, 16)
                xt: {DYN} = pl.tile.load(x, [0, 0], [16, 64], valid_shape=[rows, 64], {MEM}.Vec)
                y: {DYN} = pl.tile.exp(xt)
                o = pl.tile.store(y, [0, 0], out)
                return o"""
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore){kernel}
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV){kernel}
    """, ("MixedKernelExpanded", "TypeCheck", "UseAfterDef"))


SCALE_TILE = "pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec]"


def test_scalar_arithmetic_only_the_vector_side_needs_is_not_duplicated_on_the_cube():
    check_pass("expand_mixed_kernel", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, sc: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[{T}]) -> {T}:
                st: {SCALE_TILE} = pl.tile.load(sc, [0, 0], [1, 64], {MEM}.Vec)
                f = pl.tile.read(st, [0, 0])
                f2 = f * 2.0{CUBE_PROLOGUE}
                cv: {VEC} = pl.tile.move(c, {MEM}.Vec)
                r: {VEC} = pl.tile.muls(cv, f2)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k_aic(self, a: {B}, b: {B}, sc: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[{T}]):{CUBE_PROLOGUE}
                pl.tile.tpush_to_aiv(c, split=0)

            @pl.function(type=pl.FunctionType.AIV)
            def k_aiv(self, a: {B}, b: {B}, sc: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[{T}]) -> {T}:
                st: {SCALE_TILE} = pl.tile.load(sc, [0, 0], [1, 64], {MEM}.Vec)
                f = pl.tile.read(st, [0, 0])
                f2 = f * 2.0
                cv: {VEC} = pl.tile.tpop_from_aic(shape=[64, 64], dtype=pl.FP32)
                r: {VEC} = pl.tile.muls(cv, f2)
                pl.tile.tfree_to_aic(cv)
                o = pl.tile.store(r, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Group)
            def k(self, a: {B}, b: {B}, sc: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[{T}]) -> {T}:
                self.k_aic(a, b, sc, out)
                r = self.k_aiv(a, b, sc, out)
                return r
    """, ("MixedKernelExpanded", "TypeCheck", "UseAfterDef"))


def test_scalar_computed_on_the_vector_side_and_read_by_the_cube_is_an_error():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 64], pl.BF16], b: {B}, rows: pl.Tensor[[1, 64], pl.INT32],
                  out: pl.Out[{T}]) -> {T}:
                rt: pl.Tile[[1, 64], pl.INT32, pl.Mem.Vec] = pl.tile.load(rows, [0, 0], [1, 64], {MEM}.Vec)
                first = pl.tile.read(rt, [0, 0])
                row = pl.cast(first, pl.INDEX) * 64
                at: {MAT} = pl.tile.load(a, [row, 0], [64, 64], {MEM}.Mat)
                al: {LEFT} = pl.tile.move(at, {MEM}.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MEM}.Mat)
                br: {RIGHT} = pl.tile.move(bt, {MEM}.Right)
                c: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                o = pl.tile.store(c, [0, 0], out)
                return o
    """
    with pytest.raises(PassError) as err:
        expand_mixed_kernel()(parse(src))
    msg = err.value.message
    assert msg.startswith(f"scalar 'first' is computed by AIV work (line {line_of(src, 'first = ')}) "
                          "and read in the AIC kernel of 'k'")
    assert "only tiles cross between the AIC and AIV kernels" in msg
    assert err.value.line == line_of(src, "row = pl.cast(first")
