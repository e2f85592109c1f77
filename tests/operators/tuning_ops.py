"""Small operators the tuner tests search (importable by the subprocess test too)."""

import torch

import plang as pl
from plang.dtypes import FP32
from plang.operators import InOut, JitOperator, param, tunable
from plang.operators.kernels import RowSoftmax
from plang.operators.kernels.common import RowBlocks


class SmallSoftmax(RowSoftmax):
    """RowSoftmax over a 6-point space; rows=32 is refused by `compatible()`."""

    rows = tunable(domain=(8, 16, 32))
    blocks = tunable(domain=(1, 2))

    def compatible(self):
        super().compatible()
        if self.rows == 32:
            raise ValueError("SmallSoftmax: rows=32 is refused for this test")


class WrongAtEight(SmallSoftmax):
    """Its build forgets to normalize when rows=8: a wrong candidate the tuner must reject."""

    def build(self, cores):
        if cores.rows != 8:
            return super().build(cores)
        rows = cores.rows

        @pl.jit.incore
        def exp_only(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            m, n = x.shape
            for r in pl.range(0, m, rows):
                y = pl.store(pl.exp(pl.load(x, [r, 0], [rows, n])), [r, 0], y)
            return y

        @pl.jit
        def wrong(x: pl.Tensor, y: pl.Out[pl.Tensor]):
            y = exp_only(x, y)
            return y

        return wrong


class Refused(SmallSoftmax):
    def compatible(self):
        raise ValueError(f"Refused: rows={self.rows} is never legal")


def sample() -> torch.Tensor:
    return torch.linspace(-3, 3, 64 * 128).reshape(64, 128)


class DoubleInPlace(RowBlocks, JitOperator):
    """x *= 2 in place (an InOut-only operator): every run changes its input."""

    M: int = param()
    N: int = param()
    rows: int | None = tunable(domain=(8, 16))
    blocks: int | None = tunable(domain=(1, 2))
    x = InOut(M, N, dtype=FP32, obj_shape=(rows, N), per=blocks)

    def build(self, cores):
        rows, blocks = cores.rows, cores.blocks

        @pl.jit.incore
        def double_block(x: pl.InOut[pl.Tensor]):
            m, n = x.shape
            share = m // blocks
            first = pl.tile.get_block_idx() * share
            for r in pl.range(first, first + share, rows):
                x = pl.store(pl.mul(pl.load(x, [r, 0], [rows, n]), 2.0), [r, 0], x)
            return x

        @pl.jit
        def double(x: pl.InOut[pl.Tensor]):
            with pl.spmd(blocks):
                x = double_block(x)
            return x

        return double

    def reference(self, x):
        return x * 2
