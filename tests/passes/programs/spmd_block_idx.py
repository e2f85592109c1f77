"""SPMD elementwise kernel: each of 4 blocks handles 32 rows, found from its block index."""
import plang as pl


@pl.program
class SpmdScale:
    @pl.function
    def main(self, x: pl.Tensor[[128, 64], pl.FP32], y: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        with pl.spmd(4, name_hint="scale_add"):
            i = pl.tile.get_block_idx()
            tx = pl.slice(x, [32, 64], [i * 32, 0])
            ty = pl.slice(y, [32, 64], [i * 32, 0])
            out = pl.assemble(out, pl.add(pl.mul(tx, 2.0), ty), [i * 32, 0])
        return out
