"""FlattenCallExpr: nested calls are bound to temporaries (three-address form)."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, parse

from plang.passes import PassError, flatten_call_expr, get_property

VERIFY = ("CallsFlattened", "SSAForm", "UseAfterDef", "TypeCheck")


def test_nested_calls_innermost_first_including_loop_init_yield_and_return():
    check_pass("flatten_call_expr", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 1], pl.FP32]:
                x: pl.Tensor[[64, 64], pl.FP32] = pl.exp(pl.row_expand_sub(a, pl.row_max(a)))
                for i, (acc,) in pl.range(n, init_values=(pl.row_sum(x),)):
                    r: pl.Tensor[[64, 1], pl.FP32] = pl.yield_(pl.add(acc, pl.row_sum(x)))
                return pl.mul(r, r)
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 1], pl.FP32]:
                t0: pl.Tensor[[64, 1], pl.FP32] = pl.row_max(a)
                t1: pl.Tensor[[64, 64], pl.FP32] = pl.row_expand_sub(a, t0)
                x: pl.Tensor[[64, 64], pl.FP32] = pl.exp(t1)
                t2: pl.Tensor[[64, 1], pl.FP32] = pl.row_sum(x)
                for i, (acc,) in pl.range(n, init_values=(t2,)):
                    t3: pl.Tensor[[64, 1], pl.FP32] = pl.row_sum(x)
                    t4: pl.Tensor[[64, 1], pl.FP32] = pl.add(acc, t3)
                    r: pl.Tensor[[64, 1], pl.FP32] = pl.yield_(t4)
                t5: pl.Tensor[[64, 1], pl.FP32] = pl.mul(r, r)
                return t5
    """, VERIFY)


def test_calls_in_branch_conditions_and_scalar_arithmetic_inside_a_scope():
    check_pass("flatten_call_expr", """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    if pl.tensor.dim(a, 0) * 2 > 64:
                        b: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(pl.exp(pl.neg(a)))
                    else:
                        b: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(a)
                return b
    """, """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    d: pl.Scalar[pl.INT64] = pl.tensor.dim(a, 0)
                    if d * 2 > 64:
                        t: pl.Tensor[[M, 64], pl.FP32] = pl.neg(a)
                        t2: pl.Tensor[[M, 64], pl.FP32] = pl.exp(t)
                        b: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(t2)
                    else:
                        b: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(a)
                return b
    """, VERIFY)


def test_multiple_outputs_of_a_call_stay_a_tuple_value():
    check_pass("flatten_call_expr", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64], pl.FP32]
                  ) -> tuple[pl.Tensor[[64], pl.FP32], pl.Tensor[[64], pl.FP32]]:
                return pl.exp(x), pl.neg(x)

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                p, q = self.k(pl.add(a, a))
                return pl.add(p, q)
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64], pl.FP32]
                  ) -> tuple[pl.Tensor[[64], pl.FP32], pl.Tensor[[64], pl.FP32]]:
                t0: pl.Tensor[[64], pl.FP32] = pl.exp(x)
                t1: pl.Tensor[[64], pl.FP32] = pl.neg(x)
                return t0, t1

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                t2: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                p_q: pl.Tuple[pl.Tensor[[64], pl.FP32], pl.Tensor[[64], pl.FP32]] = self.k(t2)
                p: pl.Tensor[[64], pl.FP32] = p_q[0]
                q: pl.Tensor[[64], pl.FP32] = p_q[1]
                t3: pl.Tensor[[64], pl.FP32] = pl.add(p, q)
                return t3
    """, VERIFY)


def test_flat_program_is_unchanged_and_property_reports_nesting():
    src = """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                y: pl.Tensor[[64], pl.FP32] = pl.exp(pl.neg(x))
                return y
    """
    prog = parse(src)
    with pytest.raises(PassError, match="nested call expression") as err:
        get_property("CallsFlattened").verify(prog)
    assert err.value.line == 9
    flat = flatten_call_expr()(prog)
    get_property("CallsFlattened").verify(flat)
    from plang.ir import assert_structural_equal
    assert_structural_equal(flatten_call_expr()(flat), flat)


def test_call_in_while_condition_is_an_error():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Scalar[pl.INDEX]:
                for (k,) in pl.while_(init_values=(0,)):
                    pl.cond(k < pl.tensor.dim(a, 0))
                    k2: pl.Scalar[pl.INDEX] = pl.yield_(k + 1)
                return k2
    """)
    with pytest.raises(PassError, match="call in a pl.while_ condition cannot be flattened") as err:
        flatten_call_expr()(prog)
    assert err.value.line == 8
