"""Fused linear + bias + ReLU: cube matmul feeding vector epilogue in one kernel."""
import plang as pl


@pl.program
class LinearRelu:
    @pl.function
    def main(self, x: pl.Tensor[[64, 128], pl.BF16], w: pl.Tensor[[128, 64], pl.BF16],
             bias: pl.Tensor[[64, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear_relu"):
            h = pl.matmul(x, w, out_dtype=pl.FP32)
            h = pl.add(h, bias)
            y = pl.assemble(y, pl.relu(h), [0, 0])
        return y
