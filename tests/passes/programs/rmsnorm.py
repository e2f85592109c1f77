"""RMSNorm: y = x * rsqrt(mean(x^2) + eps) * gamma, with an inline helper for the
normalisation and an unrolled loop over two 32-row halves of each 64-row block."""

import plang as pl


@pl.program
class RmsNorm:
    @pl.function(type=pl.FunctionType.Inline)
    def normalize(self, t: pl.Tensor[[32, 256], pl.FP32],
                  gamma: pl.Tensor[[32, 256], pl.FP32]) -> pl.Tensor[[32, 256], pl.FP32]:
        sq: pl.Tensor[[32, 256], pl.FP32] = pl.mul(t, t)
        ms: pl.Tensor[[32, 1], pl.FP32] = pl.tensor.muls(pl.row_sum(sq), 1.0 / 256)
        inv: pl.Tensor[[32, 1], pl.FP32] = pl.rsqrt(pl.tensor.adds(ms, 1e-6))
        y: pl.Tensor[[32, 256], pl.FP32] = pl.mul(pl.row_expand_mul(t, inv), gamma)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 256], pl.FP32], gamma: pl.Tensor[[32, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 256], pl.FP32]]) -> pl.Tensor[[128, 256], pl.FP32]:
        for blk in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                for h in pl.unroll(2):
                    row: pl.Scalar[pl.INDEX] = blk * 64 + h * 32
                    t: pl.Tensor[[32, 256], pl.FP32] = pl.slice(x, [32, 256], [row, 0])
                    y: pl.Tensor[[32, 256], pl.FP32] = self.normalize(t, gamma)
                    out = pl.assemble(out, y, [row, 0])
        return out
