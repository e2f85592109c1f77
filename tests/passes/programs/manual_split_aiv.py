"""A hand-split mixed kernel: cube matmul, then a full-width vector phase (mode=NONE, both
AIV lanes) that receives the product through pl.aiv_shard and hands a lane-uniform result
back through pl.aic_gather for a second matmul."""
import plang as pl


@pl.program
class ManualSplit:
    @pl.function
    def main(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
             w: pl.Tensor[[64, 64], pl.BF16],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="two_matmuls"):
            ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            mm = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                           pl.move(tb, target_memory=pl.MemorySpace.Right), out_dtype=pl.FP32)
            for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                half = pl.aiv_shard(mm)
                act = pl.cast(pl.exp(half), pl.BF16)
                back = pl.aic_gather(act)
            tw = pl.load(w, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            res = pl.matmul(pl.move(back, target_memory=pl.MemorySpace.Left),
                            pl.move(tw, target_memory=pl.MemorySpace.Right), out_dtype=pl.FP32)
            out = pl.store(res, [0, 0], out)
        return out
