"""ConvertToSSA: re-bindings, loop-carried names, branch merges, scopes."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, parse

from plang.ir import assert_structural_equal
from plang.passes import PassError, convert_to_ssa, get_property

SSA = ("SSAForm", "UseAfterDef", "TypeCheck")


def test_straight_line_rebinding_gets_fresh_vars():
    check_pass("convert_to_ssa", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                x = pl.mul(x, a)
                x = pl.exp(x)
                return x
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                x1: pl.Tensor[[64], pl.FP32] = pl.mul(x, a)
                x2: pl.Tensor[[64], pl.FP32] = pl.exp(x1)
                return x2
    """, SSA)


def test_loop_carried_names_become_iter_args_dead_temps_do_not():
    check_pass("convert_to_ssa", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                t: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                for i in pl.range(n):
                    t = pl.mul(acc, a)
                    acc = pl.add(acc, t)
                return acc
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                t: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                for i, (acc_it,) in pl.range(n, init_values=(acc,)):
                    t1: pl.Tensor[[64], pl.FP32] = pl.mul(acc_it, a)
                    acc1: pl.Tensor[[64], pl.FP32] = pl.add(acc_it, t1)
                    acc_out: pl.Tensor[[64], pl.FP32] = pl.yield_(acc1)
                return acc_out
    """, SSA)


def test_branch_assignments_become_if_return_vars_with_implicit_else():
    check_pass("convert_to_ssa", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                y: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                if n > 4:
                    x = pl.mul(x, a)
                    y = pl.exp(a)
                else:
                    y = pl.neg(a)
                z: pl.Tensor[[64], pl.FP32] = pl.add(x, y)
                return z
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                y: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                if n > 4:
                    x1: pl.Tensor[[64], pl.FP32] = pl.mul(x, a)
                    y1: pl.Tensor[[64], pl.FP32] = pl.exp(a)
                    x2, y3 = pl.yield_(x1, y1)
                else:
                    y2: pl.Tensor[[64], pl.FP32] = pl.neg(a)
                    x2, y3 = pl.yield_(x, y2)
                z: pl.Tensor[[64], pl.FP32] = pl.add(x2, y3)
                return z
    """, SSA)


def test_nested_loops_carry_through_both_levels_and_scope_shares_bindings():
    check_pass("convert_to_ssa", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32],
                     out: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                for i in pl.range(4):
                    for j in pl.range(2):
                        with pl.at(level=pl.Level.CORE_GROUP):
                            out = pl.add(out, a)
                return out
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32],
                     out: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                for i, (o1,) in pl.range(4, init_values=(out,)):
                    for j, (o2,) in pl.range(2, init_values=(o1,)):
                        with pl.at(level=pl.Level.CORE_GROUP):
                            o3: pl.Tensor[[64], pl.FP32] = pl.add(o2, a)
                        o4: pl.Tensor[[64], pl.FP32] = pl.yield_(o3)
                    o5: pl.Tensor[[64], pl.FP32] = pl.yield_(o4)
                return o5
    """, SSA)


def test_explicit_yields_are_kept_and_carried_names_appended_with_dynamic_dims():
    check_pass("convert_to_ssa", """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[M, 64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
                s: pl.Tensor[[M, 64], pl.FP32] = pl.add(a, a)
                for i, (acc,) in pl.range(n, init_values=(a,)):
                    s = pl.add(s, acc)
                    nxt: pl.Tensor[[M, 64], pl.FP32] = pl.mul(acc, a)
                    r: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(nxt)
                t: pl.Tensor[[M, 64], pl.FP32] = pl.add(r, s)
                return t
    """, """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[M, 64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
                s: pl.Tensor[[M, 64], pl.FP32] = pl.add(a, a)
                for i, (acc, s_it) in pl.range(n, init_values=(a, s)):
                    s1: pl.Tensor[[M, 64], pl.FP32] = pl.add(s_it, acc)
                    nxt: pl.Tensor[[M, 64], pl.FP32] = pl.mul(acc, a)
                    r, s2 = pl.yield_(nxt, s1)
                t: pl.Tensor[[M, 64], pl.FP32] = pl.add(r, s2)
                return t
    """, SSA)


def test_while_loop_carries_names_read_by_its_condition():
    check_pass("convert_to_ssa", """
        @pl.program
        class P:
            @pl.function
            def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                k: pl.Scalar[pl.INDEX] = 0
                for (x,) in pl.while_(init_values=(0,)):
                    pl.cond(k < n)
                    k = k + 2
                    x2: pl.Scalar[pl.INDEX] = pl.yield_(x + 1)
                return x2 + k
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                k: pl.Scalar[pl.INDEX] = 0
                for (x, k1) in pl.while_(init_values=(0, k)):
                    pl.cond(k1 < n)
                    k2: pl.Scalar[pl.INDEX] = k1 + 2
                    x2, k3 = pl.yield_(x + 1, k2)
                return x2 + k3
    """, SSA)


def test_a_type_names_the_current_binding_of_its_dynamic_extent():
    # as UnrollLoops leaves an unrolled body: `rows` and `t` bound twice, t's type mentions rows
    tile = "pl.Tile[[16, 64], pl.FP32, pl.TileView(valid_shape=[{}, 64])]"
    check_pass("convert_to_ssa", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                rows: pl.Scalar[pl.INDEX] = pl.min(n, 16)
                t: {tile.format("rows")} = pl.tile.load(a, [0, 0], [16, 64], valid_shape=[rows, 64])
                out = pl.tile.store(t, [0, 0], out)
                rows = pl.min(n - 16, 16)
                t = pl.tile.load(a, [16, 0], [16, 64], valid_shape=[rows, 64])
                out = pl.tile.store(t, [16, 0], out)
                return out
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                rows: pl.Scalar[pl.INDEX] = pl.min(n, 16)
                t: {tile.format("rows")} = pl.tile.load(a, [0, 0], [16, 64], valid_shape=[rows, 64])
                out1: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t, [0, 0], out)
                rows1: pl.Scalar[pl.INDEX] = pl.min(n - 16, 16)
                t1: {tile.format("rows1")} = pl.tile.load(a, [16, 0], [16, 64], valid_shape=[rows1, 64])
                out2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t1, [16, 0], out1)
                return out2
    """, SSA)


def test_ssa_input_is_unchanged():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                y: pl.Tensor[[64], pl.FP32] = pl.mul(x, a)
                return y
    """)
    assert_structural_equal(convert_to_ssa()(prog), prog)


def test_name_assigned_in_one_branch_and_used_after_is_an_error():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                if n > 4:
                    y: pl.Tensor[[64], pl.FP32] = pl.exp(a)
                return y
    """)
    with pytest.raises(PassError, match="'y' is assigned in only one branch") as err:
        convert_to_ssa()(prog)
    assert err.value.line == 8


def test_ssa_form_verifier_reports_second_binding():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                x = pl.mul(x, a)
                return x
    """)
    with pytest.raises(PassError, match="'x' is assigned more than once .*first bound at line 8") as err:
        get_property("SSAForm").verify(prog)
    assert err.value.line == 9
