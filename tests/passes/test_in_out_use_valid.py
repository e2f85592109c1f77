"""InOutUseValid: a tensor passed as Out / InOut is not read again after the call."""

from __future__ import annotations

import pytest
from pass_testing import line_of, parse

from plang.passes import PassError, PassManager, in_out_use_valid

T = "pl.Tensor[[64], pl.FP32]"
KERNEL = f"""
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.InOut[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0])
                return o1
"""


def test_reading_the_stale_argument_is_reported_at_the_reader():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o1 = self.k(x, out)
                o2 = self.k(out, o1)
                return o2
    """
    with pytest.raises(PassError) as err:
        in_out_use_valid()(parse(src))
    assert f"'out' was passed to 'k' as an Out/InOut argument (line {line_of(src, 'o1 = self.k')})" \
        in err.value.message
    assert err.value.line == line_of(src, "o2 = self.k(out, o1)")


def test_rebinding_through_the_result_is_valid_also_in_loops():
    prog = parse(f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (acc,) in pl.range(3, init_values=(out,)):
                    a2 = self.k(x, acc)
                    r = pl.yield_(a2)
                return r
    """)
    assert in_out_use_valid()(prog) is prog


def test_returning_the_stale_argument_is_reported():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o1 = self.k(x, out)
                return out
    """
    with pytest.raises(PassError) as err:
        in_out_use_valid()(parse(src))
    assert err.value.line == line_of(src, "return out")


def test_a_bare_kernel_call_is_not_rebound_so_reading_its_out_argument_stays_an_error():
    """RebindWrittenOperands rebinds a bare write *op*; a bare call of a program function
    with an Out argument keeps the stale read, and the pipeline reports it."""
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                self.k(x, out)
                return out
    """
    with pytest.raises(PassError) as err:
        PassManager(["RebindWrittenOperands", "ConvertToSSA", "InOutUseValid"]).run(parse(src))
    assert "'out' was passed to 'k'" in err.value.message
    assert err.value.line == line_of(src, "return out")


def test_branches_exclude_each_other_so_each_may_pass_the_same_argument():
    """A write in the then branch does not make the argument stale in the else branch; each
    branch yields its own result (the shape ConvertToSSA gives a conditional submit)."""
    prog = parse(f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}], n: pl.Scalar[pl.INDEX]) -> {T}:
                if n > 0:
                    o1 = self.k(x, out)
                    r = pl.yield_(o1)
                else:
                    o2 = self.k(pl.exp(x), out)
                    r = pl.yield_(o2)
                return r
    """)
    assert in_out_use_valid()(prog) is prog


def test_a_write_in_either_branch_makes_the_argument_stale_after_the_if():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}], n: pl.Scalar[pl.INDEX]) -> {T}:
                if n > 0:
                    o1 = self.k(x, out)
                    r = pl.yield_(o1)
                else:
                    r = pl.yield_(x)
                o3 = self.k(r, out)
                return o3
    """
    with pytest.raises(PassError) as err:
        in_out_use_valid()(parse(src))
    assert err.value.line == line_of(src, "o3 = self.k(r, out)")


def test_a_write_in_the_body_reaches_the_next_iteration_unless_it_is_an_iter_arg():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (acc,) in pl.range(3, init_values=(x,)):
                    y = pl.add(acc, out)
                    o1 = self.k(y, out)
                    r = pl.yield_(o1)
                return r
    """
    with pytest.raises(PassError) as err:
        in_out_use_valid()(parse(src))
    assert err.value.line == line_of(src, "y = pl.add(acc, out)")
