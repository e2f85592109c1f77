"""AutoTileMatmulL0: matmuls larger than one L0 block become loops of L0 blocks; the tiled
program computes the same result (run on the simulated chip, checked against torch)."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang import ir, passes
from plang.backend import BackendType, reset_for_testing, set_backend_type
from plang.pypto_core.passes import MemoryPlanner


def _program(M: int, K: int, N: int, dtype):
    @pl.program
    class Matmul:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[M, K], dtype], b: pl.Tensor[[K, N], dtype],
                   out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            lm = pl.tile.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
            rm = pl.tile.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
            c = pl.tile.matmul(lm, rm, out_dtype=pl.FP32)
            out = pl.tile.store(c, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def orchestrator(self, a: pl.Tensor[[M, K], dtype], b: pl.Tensor[[K, N], dtype],
                         out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            out = self.kernel(a, b, out)
            return out

    return Matmul


def _tiled(program, planner=MemoryPlanner.PYPTO):
    reset_for_testing()
    set_backend_type(BackendType.Ascend910B)
    with passes.PassContext([], memory_planner=planner):
        for make in (passes.convert_to_ssa, passes.convert_tensor_to_tile_ops, passes.auto_tile_matmul_l0):
            program = make()(program)
    reset_for_testing()
    return program


@pytest.mark.parametrize("M, K, N, dtype, planner, expect", [
    # K-only: one pipelined K loop (fp32 [16, 256] x [256, 128] needs k < 256)
    (16, 256, 128, pl.FP32, MemoryPlanner.PYPTO, ["pl.pipeline(0, 256, 64, stage=2"]),
    # K loop with a peeled K tail (688 = 8 x 80 + 48)
    (128, 688, 192, pl.BF16, MemoryPlanner.PYPTO, ["pl.pipeline(0, 640, ", "[128, 48]"]),
    # output too big for L0C, full K: held axis outer, moving axis pipelined and double-buffered
    (320, 64, 320, pl.FP32, MemoryPlanner.DSA_RP, ['"pipeline_double_buffer_c": True']),
    # output too big for L0C, split K: a K loop per output block
    (192, 256, 192, pl.FP32, MemoryPlanner.PYPTO, ["pl.pipeline(0, 256, 32, stage=2", "[96, 32]"]),
])
def test_tiled_matmul_runs_and_matches_torch(M, K, N, dtype, planner, expect):
    tiled = _tiled(_program(M, K, N, dtype), planner)
    printed = ir.python_print(tiled)
    for text in expect:
        assert text in printed, printed
    assert "pl.tile.extract" in printed and "target_memory=pl.MemorySpace.Left" in printed
    assert ir.python_print(pl.parse(printed)) == printed  # the tiled form round-trips
    torch_dtype = torch.float32 if dtype is pl.FP32 else torch.bfloat16
    a = torch.randn(M, K).to(torch_dtype)
    b = torch.randn(K, N).to(torch_dtype)
    out = torch.zeros(M, N)
    ir.compile(tiled, dump_passes=False)(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=2e-3, atol=2e-3)


def test_an_l0_sized_matmul_is_left_alone():
    program = _program(64, 64, 64, pl.FP32)
    tiled = _tiled(program)
    assert "pl.tile.extract" not in ir.python_print(tiled)
