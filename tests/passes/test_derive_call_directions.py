"""DeriveCallDirections: every call of a program function records its arguments' directions.

The printed `arg_directions=` keyword is not yet read back by the parser (see
docs/ir-text-format.md), so the expected programs are written without it and the
directions are compared separately.
"""

from __future__ import annotations

import pytest
from pass_testing import parse

from plang.ir import Call, GlobalVar, ParamDirection, assert_structural_equal
from plang.ir.node import freeze_attrs
from plang.passes import PassError, derive_call_directions
from plang.passes.analysis.var_uses import calls_in

In, Out, InOut, NoDep = ParamDirection.In, ParamDirection.Out, ParamDirection.InOut, ParamDirection.NoDep
T = "pl.Tensor[[64], pl.FP32]"
KERNELS = f"""
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0])
                return o1

            @pl.function(type=pl.FunctionType.InCore)
            def acc(self, x: {T}, o: pl.InOut[{T}], s: pl.Scalar[pl.FP32]) -> {T}:
                o1 = pl.assemble(o, pl.add(pl.slice(o, [64], [0]), pl.mul(x, s)), [0])
                return o1
"""


def directions(src: str) -> list[tuple[str, tuple[ParamDirection, ...]]]:
    before = parse(src)
    after = derive_call_directions()(before)
    stripped = [c.replace(kwargs=freeze_attrs({k: v for k, v in c.kwargs.items() if k != "arg_directions"}))
                for c in calls_in(after.get("main").body)]
    for old, new in zip(calls_in(before.get("main").body), stripped):
        assert_structural_equal(old, new)  # nothing but the directions changed
    return [(c.op.name, c.kwargs["arg_directions"]) for c in calls_in(after.get("main").body)
            if isinstance(c, Call) and isinstance(c.op, GlobalVar)]


def test_directions_follow_the_callee_parameters():
    assert directions(f"""
        @pl.program
        class P:{KERNELS}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                a = self.k(x, out)
                b = self.acc(x, a, 2.0)
                return b
    """) == [("k", (In, Out)), ("acc", (In, InOut, In))]


def test_no_dep_overrides_in_and_inout():
    assert directions(f"""
        @pl.program
        class P:{KERNELS}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                a = self.k(pl.no_dep(x), out)
                b = self.acc(x, pl.no_dep(a), 2.0)
                return b
    """) == [("k", (NoDep, Out)), ("acc", (In, NoDep, In))]


def test_calls_inside_loops_and_submits():
    assert directions(f"""
        @pl.program
        class P:{KERNELS}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.range(2, init_values=(out,)):
                    o2, t = pl.submit(self.acc, x, o, 1.0)
                    r = pl.yield_(o2)
                return r
    """) == [("acc", (In, InOut, In))]


def test_pipeline_output_records_directions_on_every_dispatch():
    from plang.passes import PassManager

    prog = PassManager("Default", stop_after="DeriveCallDirections").run(parse(f"""
        @pl.program
        class P:
            @pl.function
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[x]):
                    o = pl.assemble(out, pl.exp(x), [0])
                return o
    """))
    (call,) = [c for c in calls_in(prog.get("main").body) if isinstance(c.op, GlobalVar)]
    assert call.kwargs["arg_directions"] == (NoDep, Out)  # x is read first (by the exp)


def test_unknown_callee_is_an_error_at_the_call():
    prog = parse(f"""
        @pl.program
        class P:{KERNELS}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                a = self.k(x, out)
                return a
    """)
    prog = prog.with_functions([f for f in prog.functions.values() if f.name != "k"])
    with pytest.raises(PassError, match="unknown function 'k'"):
        derive_call_directions()(prog)
