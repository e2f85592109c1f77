"""Row-wise ReLU over a tensor whose row count is dynamic: 32-row tiles in a loop whose
bound comes from the tensor's shape."""
import plang as pl

N = pl.dynamic("N")


@pl.program
class DynamicRows:
    @pl.function
    def main(self, x: pl.Tensor[[N, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[N, 64], pl.FP32]]) -> pl.Tensor[[N, 64], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="relu_rows"):
            for r in pl.range(0, rows, 32):
                t = pl.slice(x, [32, 64], [r, 0])
                out = pl.assemble(out, pl.relu(t), [r, 0])
        return out
