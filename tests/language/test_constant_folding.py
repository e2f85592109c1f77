# ruff: noqa: E501  (DSL source text)
"""Python values from closures and module globals fold into the IR at parse time: ints,
floats, bools, tuples/lists, enums, dynamic dims, other DSL functions, and Python arithmetic
on them. Each case is checked against the same program written with literals."""

from __future__ import annotations  # signature annotations stay strings (PEP 563)

import plang as pl
from plang.ir import assert_structural_equal

LITERAL = """
import plang as pl

M = pl.dynamic("M")


@pl.program
class Folded:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 32], pl.FP32], out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        for i in pl.range(4):
            x = pl.load(a, [i * 16, 0], [16, 32])
            x = pl.mul(x, 0.25)
            x = pl.add(x, 1.0)
            out = pl.store(x, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 32], pl.FP32], out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
            out = self.k(a, out)
        return out
"""


def _build(rows: int, block: int, cols: int, scale: float, bias: bool, tile: tuple, mode, dim):
    """A program whose constants all come from this function's arguments (closure cells, or
    for `cols` and `dim`, used only in signature annotations, the enclosing scope)."""

    @pl.program
    class Folded:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[dim, cols], pl.FP32],
              out: pl.Out[pl.Tensor[[dim, cols], pl.FP32]]) -> pl.Tensor[[dim, cols], pl.FP32]:
            for i in pl.range(rows // block):
                x = pl.load(a, [i * block, 0], list(tile))
                x = pl.mul(x, scale * 0.5)
                if bias:
                    x = pl.add(x, 1.0)
                out = pl.store(x, [i * tile[0], 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[dim, cols], pl.FP32],
                 out: pl.Out[pl.Tensor[[dim, cols], pl.FP32]]) -> pl.Tensor[[dim, cols], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(mode)]):
                out = self.k(a, out)
            return out

    return Folded


def test_closure_values_fold_like_literals():
    built = _build(64, 16, 32, 0.5, True, (16, 32), pl.SplitMode.LEFT_RIGHT, pl.dynamic("M"))
    assert_structural_equal(built, pl.parse(LITERAL))


def test_closure_values_change_the_program():
    built = _build(64, 16, 32, 0.5, False, (16, 32), pl.SplitMode.LEFT_RIGHT, pl.dynamic("M"))
    assert "pl.tile.adds" not in built.as_python()
    assert "pl.tile.muls(x, 0.25)" in built.as_python()


MODULE_CONSTANTS = """
import plang as pl

M = pl.dynamic("M")
ROWS, BLOCK = 64, 16
SHAPE = [16, 32]
SCALE = 0.25
ADD_BIAS = not False
MODE = pl.SplitMode.LEFT_RIGHT
CORE = pl.Level.CORE_GROUP


@pl.program
class Folded:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, SHAPE[1]], pl.FP32], out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        for i in pl.range(ROWS // BLOCK):
            x = pl.load(a, [i * BLOCK, 0], SHAPE)
            x = pl.mul(x, SCALE)
            if ADD_BIAS:
                x = pl.add(x, 2 ** 0 * 1.0)
            out = pl.store(x, [i * SHAPE[0], 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 32], pl.FP32], out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        with pl.at(level=CORE, optimizations=[pl.split(MODE)]):
            out = self.k(a, out)
        return out
"""


def test_module_constants_fold_like_literals():
    assert_structural_equal(pl.parse(MODULE_CONSTANTS), pl.parse(LITERAL))
