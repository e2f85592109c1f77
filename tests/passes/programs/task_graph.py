"""A hand-wired task graph: two producers and a consumer submitted in a manual scope with
explicit deps."""
import plang as pl


@pl.program
class TaskGraph:
    @pl.function(type=pl.FunctionType.InCore)
    def square(self, x: pl.Tensor[[64, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.assemble(out, pl.mul(x, x), [0, 0])
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def combine(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.assemble(out, pl.add(a, b), [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.manual_scope():
            sx = pl.tensor.create([64, 64], dtype=pl.FP32)
            sy = pl.tensor.create([64, 64], dtype=pl.FP32)
            sx, t1 = pl.submit(self.square, x, sx)
            sy, t2 = pl.submit(self.square, y, sy)
            out, t3 = pl.submit(self.combine, sx, sy, out, deps=[t1, t2])
        return out
