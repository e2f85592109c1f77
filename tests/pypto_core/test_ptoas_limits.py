"""Under MemoryPlanner.PTOAS two co-live runtime slots of one multi-buffer region are refused, as
by the reference; the same program compiles and computes a + b under the other planners."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang import ir
from plang.backend.pto_backend import PartialCodegenError
from plang.pypto_core.passes import MemoryPlanner

REGION = pl.MemRef(slots=2)
ONE_LIVE = pl.MemRef(slots=2)


@pl.program
class CoLive:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(4):
            lo: pl.Tile[[16, 32], pl.FP32, REGION[i % 2], pl.Mem.Vec] = pl.load(a, [i * 16, 0], [16, 32])
            hi: pl.Tile[[16, 32], pl.FP32, REGION[(i + 1) % 2], pl.Mem.Vec] = pl.load(
                b, [i * 16, 0], [16, 32])
            out = pl.store(pl.add(lo, hi), [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        out = self.kernel(a, b, out)
        return out


@pl.program
class OneLive:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
               ) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(4):
            t: pl.Tile[[16, 32], pl.FP32, ONE_LIVE[i % 2], pl.Mem.Vec] = pl.load(a, [i * 16, 0], [16, 32])
            out = pl.store(pl.add(t, t), [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
                     ) -> pl.Tensor[[64, 32], pl.FP32]:
        out = self.kernel(a, out)
        return out


def test_co_live_slots_are_refused_under_ptoas_only():
    with pytest.raises(PartialCodegenError, match="'lo' and 'hi' keep two slots of the multi-buffer region"):
        ir.compile(CoLive, dump_passes=False, memory_planner=MemoryPlanner.PTOAS)
    a, b, out = torch.randn(64, 32), torch.randn(64, 32), torch.zeros(64, 32)
    ir.compile(CoLive, dump_passes=False, memory_planner=MemoryPlanner.PYPTO)(a, b, out)
    torch.testing.assert_close(out, a + b)


def test_one_live_slot_per_iteration_compiles_under_ptoas():
    a, out = torch.randn(64, 32), torch.zeros(64, 32)
    ir.compile(OneLive, dump_passes=False, memory_planner=MemoryPlanner.PTOAS)(a, out)
    torch.testing.assert_close(out, a + a)
