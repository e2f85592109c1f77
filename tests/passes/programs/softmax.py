"""Fused row softmax over 64-row blocks: max, exp(x - max), sum, divide, one CORE_GROUP
scope per block; the running output is carried across the loop by re-binding."""

import plang as pl


@pl.program
class Softmax:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[256, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[256, 128], pl.FP32]]) -> pl.Tensor[[256, 128], pl.FP32]:
        rows: pl.Scalar[pl.INDEX] = 64
        for blk in pl.range(256 // rows):
            with pl.at(level=pl.Level.CORE_GROUP):
                t: pl.Tensor[[64, 128], pl.FP32] = pl.slice(x, [64, 128], [blk * rows, 0])
                mx: pl.Tensor[[64, 1], pl.FP32] = pl.row_max(t)
                e: pl.Tensor[[64, 128], pl.FP32] = pl.exp(pl.row_expand_sub(t, mx))
                s: pl.Tensor[[64, 1], pl.FP32] = pl.row_sum(e)
                y: pl.Tensor[[64, 128], pl.FP32] = pl.row_expand_div(e, s)
                out = pl.assemble(out, y, [blk * rows, 0])
        return out
