"""UnrollLoops: pl.unroll loops with constant bounds become copies of their body."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, parse

from plang.passes import PassError, unroll_loops


def test_step_and_nested_sequential_loop_get_fresh_loop_vars():
    check_pass("unroll_loops", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                for i in pl.unroll(0, 4, 2):
                    for j in pl.range(2):
                        t: pl.Tensor[[16, 64], pl.FP32] = pl.slice(a, [16, 64], [i * 16 + j, 0])
                        out = pl.assemble(out, t, [i * 16, 0])
                return out
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                for j in pl.range(2):
                    t: pl.Tensor[[16, 64], pl.FP32] = pl.slice(a, [16, 64], [j, 0])
                    out = pl.assemble(out, t, [0, 0])
                for j2 in pl.range(2):
                    t = pl.slice(a, [16, 64], [32 + j2, 0])
                    out = pl.assemble(out, t, [32, 0])
                return out
    """, ("NoUnrollLoops", "TypeCheck"))


def test_inner_unroll_bounds_may_use_the_outer_loop_variable():
    check_pass("unroll_loops", """
        @pl.program
        class P:
            @pl.function
            def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                s: pl.Scalar[pl.INDEX] = n
                for i in pl.unroll(2):
                    for j in pl.unroll(i + 1):
                        s = s + i * 10 + j + 1
                return s
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                s: pl.Scalar[pl.INDEX] = n
                s = s + 1
                s = s + 10 + 1
                s = s + 10 + 1 + 1
                return s
    """, ("NoUnrollLoops",))


def test_unrolled_copies_inside_a_scope_and_after_ssa_round_trip():
    out = check_pass("unroll_loops", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                with pl.at(level=pl.Level.CORE_GROUP):
                    for k in pl.unroll(3):
                        acc = pl.add(acc, a)
                return acc
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                with pl.at(level=pl.Level.CORE_GROUP):
                    acc = pl.add(acc, a)
                    acc = pl.add(acc, a)
                    acc = pl.add(acc, a)
                return acc
    """)
    from plang.passes import convert_to_ssa, get_property
    get_property("SSAForm").verify(convert_to_ssa()(out))


def test_empty_range_leaves_nothing():
    check_pass("unroll_loops", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                for k in pl.unroll(3, 3):
                    acc = pl.add(acc, a)
                return acc
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                return acc
    """)


def test_dynamic_bound_is_an_error_naming_the_bound():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                for k in pl.unroll(n):
                    acc = pl.add(acc, a)
                return acc
    """)
    with pytest.raises(PassError, match="pl.unroll needs compile-time constant bounds; stop is `n`") as err:
        unroll_loops()(prog)
    assert err.value.line == 9
