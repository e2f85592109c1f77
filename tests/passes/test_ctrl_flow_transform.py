"""CtrlFlowTransform: break / continue become guarded structured control flow."""

from __future__ import annotations

import pytest
import torch
from pass_testing import check_pass, parse

import plang as pl
from plang.passes import PassError, PassManager, get_property

HEAD = """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
"""


def test_continue_in_if_guards_the_rest_of_the_body():
    check_pass("ctrl_flow_transform", HEAD + """
                for i in pl.range(n):
                    if i % 2 == 0:
                        continue
                    acc = pl.add(acc, a)
                return acc
    """, HEAD + """
                for i in pl.range(n):
                    cont: pl.Scalar[pl.BOOL] = False
                    if i % 2 == 0:
                        cont = True
                    if not cont:
                        acc = pl.add(acc, a)
                return acc
    """, ("StructuredControlFlow",))


def test_top_level_break_drops_the_rest_and_guards_later_iterations():
    check_pass("ctrl_flow_transform", HEAD + """
                for i in pl.range(n):
                    acc = pl.add(acc, a)
                    break
                    acc = pl.mul(acc, a)
                return acc
    """, HEAD + """
                brk: pl.Scalar[pl.BOOL] = False
                for i in pl.range(n):
                    if not brk:
                        acc = pl.add(acc, a)
                        brk = True
                return acc
    """, ("StructuredControlFlow",))


def test_break_in_nested_if_sets_both_flags():
    check_pass("ctrl_flow_transform", HEAD + """
                for i in pl.range(n):
                    acc = pl.add(acc, a)
                    if i > 5:
                        if i > 7:
                            break
                        acc = pl.exp(acc)
                    acc = pl.mul(acc, a)
                return acc
    """, HEAD + """
                brk: pl.Scalar[pl.BOOL] = False
                for i in pl.range(n):
                    if not brk:
                        cont: pl.Scalar[pl.BOOL] = False
                        acc = pl.add(acc, a)
                        if i > 5:
                            if i > 7:
                                brk = True
                                cont = True
                            if not cont:
                                acc = pl.exp(acc)
                        if not cont:
                            acc = pl.mul(acc, a)
                return acc
    """, ("StructuredControlFlow",))


def test_inner_loop_escape_stays_inside_inner_loop_and_scope():
    check_pass("ctrl_flow_transform", HEAD + """
                for i in pl.range(n):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        for j in pl.range(4):
                            if j == i:
                                continue
                            acc = pl.add(acc, a)
                return acc
    """, HEAD + """
                for i in pl.range(n):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        for j in pl.range(4):
                            cont: pl.Scalar[pl.BOOL] = False
                            if j == i:
                                cont = True
                            if not cont:
                                acc = pl.add(acc, a)
                return acc
    """, ("StructuredControlFlow",))


def test_result_converts_to_valid_ssa():
    prog = parse(HEAD + """
                for i in pl.range(n):
                    if i > 3:
                        break
                    acc = pl.add(acc, a)
                return acc
    """)
    out = PassManager(["CtrlFlowTransform", "ConvertToSSA"], verify=True).run(prog)
    for prop in ("SSAForm", "UseAfterDef", "TypeCheck", "StructuredControlFlow"):
        get_property(prop).verify(out)


def test_continue_and_break_in_a_loop_with_explicit_carries_yield_per_iteration_copies():
    check_pass("ctrl_flow_transform", HEAD + """
                for i, (x,) in pl.range(n, init_values=(acc,)):
                    if i > 3:
                        break
                    if i % 2 == 0:
                        continue
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(y)
                return r
    """, HEAD + """
                for i, (x, brk) in pl.range(n, init_values=(acc, False)):
                    x_carry: pl.Tensor[[64], pl.FP32] = x
                    brk_1: pl.Scalar[pl.BOOL] = brk
                    if not brk_1:
                        cont: pl.Scalar[pl.BOOL] = False
                        if i > 3:
                            brk_1 = True
                            cont = True
                        if not cont:
                            if i % 2 == 0:
                                cont = True
                            if not cont:
                                y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                                x_carry = y
                    r, brk_2 = pl.yield_(x_carry, brk_1)
                return r
    """, ("StructuredControlFlow",))


def test_top_level_continue_in_a_carrying_loop_keeps_the_values():
    check_pass("ctrl_flow_transform", HEAD + """
                for i, (x,) in pl.range(n, init_values=(acc,)):
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                    continue
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(y)
                return r
    """, HEAD + """
                for i, (x,) in pl.range(n, init_values=(acc,)):
                    x_carry: pl.Tensor[[64], pl.FP32] = x
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(x_carry)
                return r
    """, ("StructuredControlFlow",))


def test_break_in_a_while_with_explicit_carries_stops_through_the_condition():
    prog = check_pass("ctrl_flow_transform", HEAD + """
                for (k, x) in pl.while_(init_values=(0, acc)):
                    pl.cond(k < n)
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                    if k > 3:
                        break
                    k2, r = pl.yield_(k + 1, y)
                return r
    """, HEAD + """
                for (k, x, brk) in pl.while_(init_values=(0, acc, False)):
                    pl.cond(not brk and k < n)
                    k_carry: pl.Scalar[pl.INDEX] = k
                    x_carry: pl.Tensor[[64], pl.FP32] = x
                    brk_1: pl.Scalar[pl.BOOL] = brk
                    cont: pl.Scalar[pl.BOOL] = False
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                    if k > 3:
                        brk_1 = True
                        cont = True
                    if not cont:
                        k_carry = k + 1
                        x_carry = y
                    k2, r, brk_2 = pl.yield_(k_carry, x_carry, brk_1)
                return r
    """, ("StructuredControlFlow",))
    out = PassManager(["ConvertToSSA"], verify=True).run(prog)
    for prop in ("SSAForm", "UseAfterDef", "TypeCheck"):
        get_property(prop).verify(out)


CARRY_WITH_ESCAPES = """
    @pl.program
    class C:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            zero = pl.tile.full([1, 64], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(8, init_values=(zero,)):
                if i == 6:
                    break
                if i % 2 == 1:
                    continue
                t = pl.load(x, [i, 0], [1, 64])
                s = pl.add(acc, t)
                r = pl.yield_(s)
            out = pl.store(r, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            out = self.k(x, out)
            return out
"""


def test_carrying_loop_with_break_and_continue_runs_end_to_end():
    compiled = pl.compile(parse(CARRY_WITH_ESCAPES))
    x, out = torch.randn(8, 64), torch.zeros(1, 64)
    compiled(x, out)
    torch.testing.assert_close(out[0], x[0] + x[2] + x[4])


def test_structured_control_flow_property_points_at_the_escape():
    prog = parse(HEAD + """
                for i in pl.range(n):
                    continue
                return acc
    """)
    with pytest.raises(PassError, match="'continue' in function 'main' is not structured") as err:
        get_property("StructuredControlFlow").verify(prog)
    assert err.value.line == 11
