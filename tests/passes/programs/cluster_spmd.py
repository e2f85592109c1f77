"""A cluster running a mixed matmul + sigmoid-like epilogue kernel on 2 blocks together."""
import plang as pl


@pl.program
class ClusterSpmd:
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, x: pl.Tensor[[128, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        i = pl.tile.get_block_idx()
        xt = pl.slice(x, [64, 64], [i * 64, 0])
        h = pl.matmul(xt, w, out_dtype=pl.FP32)
        out = pl.assemble(out, pl.exp(pl.neg(h)), [i * 64, 0])
        return out

    @pl.function
    def main(self, x: pl.Tensor[[128, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        with pl.cluster(name_hint="gate_group"):
            with pl.spmd(2, sync_start=True):
                out = self.gate(x, w, out)
        return out
