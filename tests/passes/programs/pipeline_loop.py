"""A row-blocked copy-scale loop software-pipelined with pl.pipeline(stage=2) over 5 blocks
(so a tail iteration remains)."""
import plang as pl


@pl.program
class Pipelined:
    @pl.function
    def main(self, x: pl.Tensor[[160, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[160, 64], pl.FP32]]) -> pl.Tensor[[160, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):
            for i in pl.pipeline(5, stage=2):
                t = pl.slice(x, [32, 64], [i * 32, 0])
                out = pl.assemble(out, pl.mul(t, 0.5), [i * 32, 0])
        return out
