"""UseAfterDef verifier: uses must be dominated by their definitions."""

from __future__ import annotations

import pytest
from pass_testing import parse

from plang.dtypes import INDEX
from plang.ir import Add, ScalarType, Var, flatten, seq
from plang.passes import PassError, use_after_def

SRC = """
    M = pl.dynamic("M")

    @pl.program
    class P:
        @pl.function
        def main(self, a: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
            x: pl.Tensor[[M, 64], pl.FP32] = pl.add(a, a)
            rows: pl.Scalar[pl.INDEX] = M // 2
            if n > 2:
                y: pl.Tensor[[M, 64], pl.FP32] = pl.exp(x)
                z: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(y)
            else:
                z: pl.Tensor[[M, 64], pl.FP32] = pl.yield_(x)
            with pl.at(level=pl.Level.CORE_GROUP):
                w: pl.Tensor[[M, 64], pl.FP32] = pl.mul(z, x)
            v: pl.Tensor[[M, 64], pl.FP32] = pl.add(w, z)
            return v
"""


def _main_stmts():
    prog = parse(SRC)
    return prog, flatten(prog.get("main").body)


def _with_body(prog, stmts):
    return prog.with_functions([prog.get("main").replace(body=seq(stmts))])


def test_scope_bindings_and_dynamic_dims_are_visible():
    prog, _ = _main_stmts()
    assert use_after_def()(prog) is prog


def test_use_before_the_definition_in_straight_line_code():
    prog, stmts = _main_stmts()
    swapped = [stmts[1], stmts[0]] + stmts[2:]
    bad = _with_body(prog, [stmts[0].replace(value=stmts[4].value)] + stmts[1:])  # x = w + z first
    with pytest.raises(PassError, match="variable 'w' is used before it is defined in function 'main': its "
                                        "definition does not dominate this use") as err:
        use_after_def()(bad)
    assert err.value.line == 10
    use_after_def()(_with_body(prog, swapped))  # independent statements may swap


def test_value_defined_only_inside_a_branch_does_not_escape():
    prog, stmts = _main_stmts()
    if_stmt = stmts[2]
    v = stmts[4]
    y = flatten(if_stmt.then_body)[0].var
    reads_y = v.replace(value=v.value.replace(args=(y, v.value.args[1])))
    bad = _with_body(prog, stmts[:4] + [reads_y] + stmts[5:])
    with pytest.raises(PassError, match="variable 'y' is used before it is defined") as err:
        use_after_def()(bad)
    assert err.value.line == 19


def test_undefined_variable_is_reported_as_never_defined():
    prog, stmts = _main_stmts()
    ghost = Var("ghost", ScalarType(INDEX))
    rows = stmts[1]
    bad = _with_body(prog, [stmts[0], rows.replace(value=Add(rows.value, ghost))] + stmts[2:])
    with pytest.raises(PassError, match="variable 'ghost' is used before it is defined in function 'main': "
                                        "it is never defined") as err:
        use_after_def()(bad)
    assert err.value.line == 11
