"""CtrlFlowTransform: break / continue become guarded structured control flow."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, parse

from plang.passes import PassError, PassManager, ctrl_flow_transform, get_property

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


def test_escape_in_loop_with_explicit_yield_is_an_error():
    prog = parse(HEAD + """
                for i, (x,) in pl.range(n, init_values=(acc,)):
                    if i > 3:
                        break
                    y: pl.Tensor[[64], pl.FP32] = pl.add(x, a)
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(y)
                return r
    """)
    with pytest.raises(PassError, match="'break' in a loop that carries values explicitly") as err:
        ctrl_flow_transform()(prog)
    assert err.value.line == 12


def test_structured_control_flow_property_points_at_the_escape():
    prog = parse(HEAD + """
                for i in pl.range(n):
                    continue
                return acc
    """)
    with pytest.raises(PassError, match="'continue' in function 'main' is not structured") as err:
        get_property("StructuredControlFlow").verify(prog)
    assert err.value.line == 11
