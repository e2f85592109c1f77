"""Tiled matmul: C = A @ B, one InCore task per 64-row block, K reduced with matmul_acc."""
import plang as pl


@pl.program
class TiledMatmul:
    @pl.function
    def main(self, a: pl.Tensor[[128, 256], pl.BF16], b: pl.Tensor[[256, 64], pl.BF16],
             c: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for m in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_block"):
                a0 = pl.slice(a, [64, 64], [m * 64, 0])
                b0 = pl.slice(b, [64, 64], [0, 0])
                acc = pl.matmul(a0, b0, out_dtype=pl.FP32)
                for k in pl.range(1, 4):
                    ak = pl.slice(a, [64, 64], [m * 64, k * 64])
                    bk = pl.slice(b, [64, 64], [k * 64, 0])
                    acc = pl.matmul_acc(acc, ak, bk)
                c = pl.assemble(c, acc, [m * 64, 0])
        return c
