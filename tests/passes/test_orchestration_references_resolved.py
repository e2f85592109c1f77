"""OrchestrationReferencesResolved: calls name existing functions with the right arity, and
host code uses no tile op."""

from __future__ import annotations

import pytest
from pass_testing import line_of, parse

from plang.passes import PassError, orchestration_references_resolved

T = "pl.Tensor[[64], pl.FP32]"
KERNEL = f"""
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0])
                return o1
"""
MAIN = f"""
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o1 = self.k(x, out)
                return o1
"""


def test_missing_callee_is_reported_at_the_call():
    src = f"""
        @pl.program
        class P:{KERNEL}{MAIN}"""
    prog = parse(src)
    prog = prog.with_functions([prog.get("main")])
    with pytest.raises(PassError) as err:
        orchestration_references_resolved()(prog)
    assert "'main' calls 'k', which is not a function of program 'P'" in err.value.message
    assert err.value.line == line_of(src, "o1 = self.k(x, out)")


def test_arity_mismatch_is_reported():
    src = f"""
        @pl.program
        class P:{KERNEL}{MAIN}"""
    prog = parse(src)
    k = prog.get("k")
    prog = prog.with_functions([k.replace(params=k.params[:1], param_directions=k.param_directions[:1]),
                                prog.get("main")])
    with pytest.raises(PassError, match="'main' calls 'k' with 2 arguments; it takes 1"):
        orchestration_references_resolved()(prog)


def test_tile_op_in_orchestration_is_reported():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                t = pl.tile.load(x, [0], [64])
                o1 = pl.tile.store(t, [0], out)
                return o1
    """
    with pytest.raises(PassError) as err:
        orchestration_references_resolved()(parse(src))
    assert "tile op tile.load in host-side function 'main'" in err.value.message
    assert err.value.line == line_of(src, "pl.tile.load")


def test_tile_ops_inside_core_scopes_and_kernels_are_fine():
    prog = parse(f"""
        @pl.program
        class P:{KERNEL}
            @pl.function
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.tile.load(x, [0], [64])
                    o1 = pl.tile.store(t, [0], out)
                o2 = self.k(x, o1)
                return o2
    """)
    assert orchestration_references_resolved()(prog) is prog
