"""SingleLaneEffects: a no-split AIV kernel sharing a Group with a cube kernel runs on both
lanes but writes DDR from lane 0 only, so a read-modify-write output is updated once."""

from __future__ import annotations

import torch
from pass_testing import check_pass

import plang as pl
from plang.ir.stmt import If
from plang.passes import PassManager
from plang.passes.analysis.var_uses import walk_stmts

T = "pl.Tensor[[16, 16], pl.FP32]"
VEC = "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]"
GROUP = f"""
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, c: pl.InOut[{T}]):
                t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(c, [0, 0], [16, 16],
                                                                       target_memory=pl.MemorySpace.Mat)
                pl.tile.tpush_to_aiv(t, split=0)

            @pl.function(type=pl.FunctionType.Group)
            def g(self, c: pl.InOut[{T}]) -> {T}:
                self.cube(c)
                r = self.vec(c)
                return r
"""


def test_lane_one_keeps_the_tensor_unwritten():
    check_pass("single_lane_effects", f"""
        @pl.program
        class P:{GROUP}
            @pl.function(type=pl.FunctionType.AIV)
            def vec(self, c: pl.InOut[{T}]) -> {T}:
                t: {VEC} = pl.tile.tpop_from_aic(split=0)
                y: {VEC} = pl.tile.add(t, t)
                pl.tile.tfree_to_aic(t)
                o: {T} = pl.tile.store(y, [0, 0], c)
                return o
    """, f"""
        @pl.program
        class P:{GROUP}
            @pl.function(type=pl.FunctionType.AIV)
            def vec(self, c: pl.InOut[{T}]) -> {T}:
                lane: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
                t: {VEC} = pl.tile.tpop_from_aic(split=0)
                y: {VEC} = pl.tile.add(t, t)
                pl.tile.tfree_to_aic(t)
                if lane == 0:
                    o1: {T} = pl.tile.store(y, [0, 0], c)
                    o: {T} = pl.yield_(o1)
                else:
                    o: {T} = pl.yield_(c)
                return o
    """, ("TypeCheck", "SSAForm", "UseAfterDef"))


M, K, N, BLOCK = 32, 64, 512, 64


@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Tensor[[M, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(0, N // BLOCK):
                n0 = i * BLOCK
                c_prev = pl.slice(c, [M, BLOCK], [0, n0])
                c_next = pl.add(c_prev, pl.matmul(a, pl.slice(b, [K, BLOCK], [0, n0])))
                c = pl.assemble(c, c_next, [0, n0])
        return c


def test_no_split_read_modify_write_is_applied_once():
    lowered = PassManager().run(Accumulate)
    (aiv,) = [f for f in lowered.functions.values() if f.func_type is pl.FunctionType.AIV]
    assert any(isinstance(s, If) for s in walk_stmts(aiv.body))
    compiled = pl.compile(Accumulate)
    for seed in range(3):
        torch.manual_seed(seed)
        a, b, c = torch.randn(M, K), torch.randn(K, N), torch.randn(M, N)
        expect = c + a @ b
        compiled(a, b, c)
        torch.testing.assert_close(c, expect, rtol=1e-4, atol=1e-4)

