# ruff: noqa: E501  (DSL source text)
"""`pl.aiv_shard` / `pl.aic_gather` take the split mode of the enclosing `pl.split_aiv` region."""

from __future__ import annotations

import pytest

import plang as pl
from plang.ir import assert_structural_equal
from plang.ir.expr import Call
from plang.ir.ops import make_call
from plang.ir.types import static_shape
from plang.ir.visitor import IRMutator, IRVisitor

from .test_diagnostics import HEADER, check

SOURCE = """
import plang as pl


@pl.function
def f(a: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        mm = pl.matmul(ta, pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat))
        for lane in pl.split_aiv(2, mode=pl.SplitMode.{mode}):
            v = pl.exp(pl.aiv_shard(mm))
            g = pl.aic_gather(v)
    return out
"""


class _Crossings(IRVisitor):
    def __init__(self) -> None:
        self.found: dict[str, Call] = {}

    def visit_Call(self, call: Call) -> None:
        if call.op.short_name in ("aiv_shard", "aic_gather"):
            self.found[call.op.short_name] = call
        self.generic_visit(call)


def _crossings(fn) -> dict[str, Call]:
    """The crossing calls of `fn`, by op short name."""
    visitor = _Crossings()
    visitor.visit(fn)
    return visitor.found


@pytest.mark.parametrize("mode, half", [("UP_DOWN", (32, 32)), ("LEFT_RIGHT", (64, 16)), ("NONE", (64, 32))])
def test_crossing_takes_the_region_mode(mode, half):
    fn = pl.parse(SOURCE.format(mode=mode))
    calls = _crossings(fn)
    region_mode = getattr(pl.SplitMode, mode)
    for call in calls.values():
        assert call.kwargs.get("mode", pl.SplitMode.NONE) is region_mode
    assert static_shape(calls["aiv_shard"].type.shape) == half
    assert static_shape(calls["aic_gather"].type.shape) == (64, 32)
    text = fn.as_python()
    assert "pl.tile.aiv_shard(mm)" in text and "pl.tile.aic_gather(v)" in text  # mode left to the region
    again = pl.parse(text)
    assert_structural_equal(fn, again)
    assert again.as_python() == text


class _ForceMode(IRMutator):
    def visit_Call(self, call: Call) -> Call:
        if call.op.short_name == "aiv_shard":
            return make_call(call.op, call.args, {"mode": pl.SplitMode.LEFT_RIGHT}, call.span)
        return self.generic_mutate(call)


def test_a_mode_disagreeing_with_its_region_prints_and_is_rejected():
    fn = _ForceMode().visit(pl.parse(SOURCE.format(mode="UP_DOWN")))
    text = fn.as_python()
    assert "pl.tile.aiv_shard(mm, mode=pl.SplitMode.LEFT_RIGHT)" in text
    with pytest.raises(pl.ParserSyntaxError, match="takes its split mode from the enclosing"):
        pl.parse(text)


def test_tensor_crossing_is_halved_in_its_region():
    src = """
import plang as pl


@pl.function
def f(a: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
    for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
        h = pl.aiv_shard(a)
    return a
"""
    call = _crossings(pl.parse(src))["aiv_shard"]
    assert call.op.name == "tensor.aiv_shard"
    assert static_shape(call.type.shape) == (64, 16)


def test_region_mode_ends_with_the_region():
    body = ("for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n    y = pl.aiv_shard(t)\n"
            "z = pl.aiv_shard(u)\nreturn a")
    check(body, pl.ParserSyntaxError, "pl.aiv_shard is only valid inside a `for lane in pl.split_aiv",
          "pl.aiv_shard(u)")


@pytest.mark.parametrize("name", ["aiv_shard", "aic_gather"])
def test_crossing_outside_every_region_is_rejected(name):
    err = check(f"y = pl.{name}(t)\nreturn a", pl.ParserSyntaxError,
                f"pl.{name} is only valid inside a `for lane in pl.split_aiv(2, mode=...)` region", f"pl.{name}(t)")
    assert "pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN)" in err.hint


def test_explicit_mode_must_repeat_the_region_mode():
    body = "for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n    y = pl.tile.aic_gather(u, mode={})\nreturn a"
    check(body.format("pl.SplitMode.LEFT_RIGHT"), pl.ParserSyntaxError,
          "pl.aic_gather takes its split mode from the enclosing pl.split_aiv region (UP_DOWN), but mode=",
          "pl.tile.aic_gather(")
    fn = pl.parse(HEADER.format(ftype="Opaque") + "    " + body.format("pl.SplitMode.UP_DOWN").replace("\n", "\n    "))
    assert static_shape(_crossings(fn)["aic_gather"].type.shape) == (64, 64)


def test_eager_call_raises():
    with pytest.raises(pl.EagerCallError, match="pl.aiv_shard only works inside a DSL function"):
        pl.aiv_shard(None)
