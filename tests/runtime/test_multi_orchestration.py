"""A program with two Orchestration functions compiles to a `MultiOrchestrationProgram`: each
entry by subscript or attribute runs against torch, its artefacts under next_levels/<name>,
and calling the whole is a TypeError naming the entries (the reference's surface)."""

from __future__ import annotations

import os

import pytest
import torch

import plang as pl
from plang import ir

T = pl.Tensor[[32, 32], pl.FP32]


@pl.program
class TwoEntries:
    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: T, b: T, f: pl.Out[T]) -> T:
        return pl.store(pl.add(pl.load(a, [0, 0], [32, 32]), pl.load(b, [0, 0], [32, 32])), [0, 0], f)

    @pl.function(type=pl.FunctionType.InCore)
    def sub_k(self, a: T, b: T, f: pl.Out[T]) -> T:
        return pl.store(pl.sub(pl.load(a, [0, 0], [32, 32]), pl.load(b, [0, 0], [32, 32])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch_add(self, a: T, b: T, f: pl.Out[T]) -> T:
        return self.add_k(a, b, f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch_sub(self, a: T, b: T, f: pl.Out[T]) -> T:
        return self.sub_k(a, b, f)


def test_each_orchestration_runs_by_name(tmp_path):
    compiled = ir.compile(TwoEntries, output_dir=str(tmp_path))
    assert compiled.orchestration_names == ["orch_add", "orch_sub"]
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    torch.testing.assert_close(compiled["orch_add"](a, b), a + b)
    torch.testing.assert_close(compiled.orch_sub(a, b), a - b)
    assert os.fspath(compiled) == str(tmp_path)
    assert compiled["orch_sub"].output_dir == tmp_path / "next_levels" / "orch_sub"
    assert compiled["orch_add"].param_names == ["a", "b", "f"]


def test_the_whole_program_is_not_called():
    compiled = ir.compile(TwoEntries)
    with pytest.raises(TypeError, match=r"2 L2 orchestrations \['orch_add', 'orch_sub'\]; select one"):
        compiled(torch.zeros(32, 32), torch.zeros(32, 32))
    with pytest.raises(KeyError, match=r"no orchestration 'missing'; it has \['orch_add', 'orch_sub'\]"):
        compiled["missing"]
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        compiled.missing  # noqa: B018
