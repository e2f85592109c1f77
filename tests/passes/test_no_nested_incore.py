"""NoNestedInCore: kernels open no nested dispatch and call no InCore function."""

from __future__ import annotations

import pytest
from pass_testing import line_of, parse

from plang.passes import PassError, no_nested_in_core

T = "pl.Tensor[[64], pl.FP32]"


def test_incore_scope_inside_a_kernel_is_reported_at_the_scope():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    o1 = pl.assemble(o, pl.exp(x), [0])
                return o1
    """
    with pytest.raises(PassError) as err:
        no_nested_in_core()(parse(src))
    assert "InCore scope inside InCore function 'k'" in err.value.message
    assert err.value.line == line_of(src, "with pl.at")


def test_kernel_calling_an_incore_function_is_reported_at_the_call():
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def inner(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0])
                return o1

            @pl.function(type=pl.FunctionType.AIV)
            def outer(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = self.inner(x, o)
                return o1
    """
    with pytest.raises(PassError) as err:
        no_nested_in_core()(parse(src))
    assert "AIV function 'outer' calls InCore function 'inner'" in err.value.message
    assert err.value.line == line_of(src, "self.inner(x, o)")


def test_orchestration_scopes_are_fine():
    prog = parse(f"""
        @pl.program
        class P:
            @pl.function
            def main(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    o1 = pl.assemble(o, pl.exp(x), [0])
                return o1
    """)
    assert no_nested_in_core()(prog) is prog
