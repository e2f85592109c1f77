"""`import plang.language as pl`, the reference's `import pypto.language as pl` with only the
package renamed, is the whole `pl` face: every name `plang` exports, the same objects, and
programs written against it parse, compile and run."""

from __future__ import annotations

import pytest
import torch

import plang
import plang.language as pl
from plang.language import FP32, FunctionType, jit


def test_every_name_of_the_face_resolves_to_the_same_object():
    public = {n for n in dir(plang) if not n.startswith("_")}
    assert public <= set(dir(pl))
    missing = [n for n in public if getattr(pl, n) is not getattr(plang, n)
               and not isinstance(getattr(plang, n), type(plang))]  # submodules: the package's own
    assert missing == []
    assert (FP32, FunctionType, jit) == (plang.FP32, plang.FunctionType, plang.jit)


def test_a_name_neither_defines_is_a_plain_attribute_error():
    with pytest.raises(AttributeError, match="module 'plang.language' has no attribute 'no_such_op'"):
        pl.no_such_op  # noqa: B018


@pl.jit
def scaled_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.add(pl.load(a, [0, 0], [32, 64]), pl.mul(pl.load(b, [0, 0], [32, 64]), 2.0))
        c = pl.store(t, [0, 0], c)
    return c


@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def row_max(self, x: pl.Tensor[[16, 32], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        return pl.store(pl.row_max(t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        return self.row_max(x, y)


def test_a_jit_kernel_written_against_the_reference_path_runs():
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    c = torch.empty(32, 64)
    scaled_add(a, b, c)
    torch.testing.assert_close(c, a + 2 * b)
    assert "pl.tile.add" in scaled_add.lower(a, b, c).as_python()


def test_a_program_written_against_the_reference_path_runs():
    x = torch.randn(16, 32)
    y = torch.empty(16, 1)
    plang.runtime.run(Rows, x, y)
    torch.testing.assert_close(y, x.amax(dim=1, keepdim=True))


_SPLIT_SCOPE = """
import plang.language as pl


@pl.function
def f(x: pl.Tensor[[16, 64], pl.FP32],
      y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[{split}(pl.SplitMode.UP_DOWN), {slot}(slot_num=4)]):
        y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 64])), [0, 0], y)
    return y
"""


def test_the_optimizations_module_spells_the_same_entries():
    long = pl.parse(_SPLIT_SCOPE.format(split="pl.optimizations.split",
                                        slot="pl.optimizations.cross_core_slot"))
    short = pl.parse(_SPLIT_SCOPE.format(split="pl.split", slot="pl.cross_core_slot"))
    assert plang.ir.structural_equal(long, short)
    entries = "optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]"
    assert entries in long.as_python()


def test_handlers_written_against_the_reference_diagnostics_catch_plangs_errors():
    from plang.language.parser.diagnostics import ParserTypeError, UndefinedVariableError
    from plang.language.parser.diagnostics.exceptions import UnsupportedFeatureError

    head = ("import plang.language as pl\n\n\n@pl.function\n"
            "def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n")
    with pytest.raises(UndefinedVariableError, match="no_such_name"):
        pl.parse(head + "    return pl.add(x, no_such_name)\n")
    with pytest.raises(ParserTypeError):
        pl.parse(head + "    return pl.add(x, pl.create_tensor([8], dtype=pl.FP32))\n")
    with pytest.raises(UnsupportedFeatureError):
        pl.parse(head + "    y = lambda: x\n    return x\n")
