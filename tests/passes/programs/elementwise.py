"""Elementwise: out = relu(a * b + a), row-tiled over a dynamic number of rows inside
CORE_GROUP scopes; each scope reads `a`, `b` and updates `out` in place."""

import plang as pl

M = pl.dynamic("M")


@pl.program
class Elementwise:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 128], pl.FP32], b: pl.Tensor[[M, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[M, 128], pl.FP32]]) -> pl.Tensor[[M, 128], pl.FP32]:
        for r in pl.range(M // 32):
            with pl.at(level=pl.Level.CORE_GROUP):
                ta: pl.Tensor[[32, 128], pl.FP32] = pl.slice(a, [32, 128], [r * 32, 0])
                tb: pl.Tensor[[32, 128], pl.FP32] = pl.slice(b, [32, 128], [r * 32, 0])
                y: pl.Tensor[[32, 128], pl.FP32] = pl.relu(pl.add(pl.mul(ta, tb), ta))
                out = pl.assemble(out, y, [r * 32, 0])
        return out
