"""A one-kernel program (c = a + b on [32, 64] FP32) shared by the build-folder, benchmark and
manual-worker tests."""

import plang as pl


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
                 c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), pl.load(b, [0, 0], [32, 64])), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        return self.tile_add(a, b, c)


@pl.jit
def jit_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), pl.load(b, [0, 0], [32, 64])), [0, 0], c)
    return c
