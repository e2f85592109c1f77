"""A chained matmul whose FP32 intermediate is cast to BF16 with `mode="rint"` for the next
matmul casts on the cube (the FIXPIPE writeback into Mat): no vector kernel, no Vec-sized
intermediate, and the result matches torch with the intermediate rounded to BF16. Another
rounding mode keeps the cast on the vector lanes."""

from __future__ import annotations

import torch

import plang as pl

BIG = 256  # a [BIG, BIG] FP32 intermediate (256 KiB) is larger than the Vec buffer


def _chained(mode: str, S: int = BIG):
    @pl.program
    class Chained:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[S, S], pl.BF16], b: pl.Tensor[[S, S], pl.BF16],
                   e: pl.Tensor[[S, S], pl.BF16],
                   out: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
            ta = pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
            c = pl.matmul(ta, tb, out_dtype=pl.FP32)
            cb = pl.cast(c, pl.BF16, mode=mode)
            te = pl.load(e, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
            return pl.store(pl.matmul(cb, te, out_dtype=pl.FP32), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[S, S], pl.BF16], b: pl.Tensor[[S, S], pl.BF16],
                 e: pl.Tensor[[S, S], pl.BF16],
                 out: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
            return self.kernel(a, b, e, out)

    return Chained


def test_rint_downcast_between_matmuls_runs_on_the_cube():
    program = _chained("rint")
    kinds = [f.func_type for f in pl.passes.PassManager().run(program).functions.values()]
    assert pl.FunctionType.AIV not in kinds
    g = torch.Generator().manual_seed(7)
    a, b, e = (torch.randn(BIG, BIG, generator=g).div(BIG ** 0.25).to(torch.bfloat16) for _ in range(3))
    out = torch.empty(BIG, BIG)
    pl.compile(program)(a, b, e, out)
    # a @ b summed in another order may round a few intermediates to the neighbouring BF16
    # value (one ulp, ~4e-3 of |mid| ~ 1, times |e| ~ 0.25): within 1e-2
    mid = (a.float() @ b.float()).to(torch.bfloat16).float()
    torch.testing.assert_close(out, mid @ e.float(), rtol=1e-2, atol=1e-2)


def test_another_rounding_mode_keeps_the_cast_on_the_vector_lanes():
    lowered = pl.passes.PassManager().run(_chained("round", 64))
    aiv = [f for f in lowered.functions.values() if f.func_type is pl.FunctionType.AIV]
    assert aiv and any("tile.cast" in str(f) for f in aiv)
