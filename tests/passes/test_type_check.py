"""TypeCheck verifier: invalid IR (valid programs edited after parsing) is reported with
the offending statement's line."""

from __future__ import annotations

import pytest
from pass_testing import parse

from plang.dtypes import FP16, FP32
from plang.ir import Assign, ConstFloat, ConstInt, Return, ScalarType, TensorType, Var, Yield, flatten, seq
from plang.passes import PassError, type_check

SRC = """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            return pl.exp(x)

        @pl.function
        def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
            x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
            for i, (acc,) in pl.range(n, init_values=(x,)):
                y: pl.Tensor[[64], pl.FP32] = self.k(acc)
                r: pl.Tensor[[64], pl.FP32] = pl.yield_(y)
            return r
"""


def _edit_main(edit):
    prog = parse(SRC)
    main = prog.get("main")
    stmts = flatten(main.body)
    return prog.with_functions([prog.get("k"), main.replace(body=seq(edit(stmts)))])


def test_valid_program_passes():
    prog = parse(SRC)
    assert type_check()(prog) is prog


def test_op_call_type_that_deduction_disagrees_with():
    def edit(stmts):
        x = stmts[0]
        return [x.replace(value=x.value.replace(type=TensorType([32], FP32)))] + stmts[1:]

    with pytest.raises(PassError, match=r"call of tensor.add is typed Tensor\[\[32\], FP32\] but its "
                                        r"operands deduce Tensor\[\[64\], FP32\]") as err:
        type_check()(_edit_main(edit))
    assert err.value.line == 12 and err.value.pass_name == "TypeCheck"


def test_binding_whose_declared_type_differs_from_the_value():
    def edit(stmts):
        x = stmts[0]
        return [x.replace(var=Var("x", TensorType([64], FP16)))] + stmts[1:]

    with pytest.raises(PassError, match=r"'x' is declared Tensor\[\[64\], FP16\] but assigned "
                                        r"Tensor\[\[64\], FP32\]") as err:
        type_check()(_edit_main(edit))
    assert err.value.line == 12


def test_function_call_argument_count_and_yield_type():
    def drop_arg(stmts):
        loop = stmts[1]
        body = flatten(loop.body)
        call = body[0].value
        return [stmts[0], loop.replace(body=seq([body[0].replace(value=call.replace(args=()))] + body[1:])),
                stmts[2]]

    with pytest.raises(PassError, match="call of 'k' passes 0 arguments but it takes 1") as err:
        type_check()(_edit_main(drop_arg))
    assert err.value.line == 14

    def bad_yield(stmts):
        loop = stmts[1]
        body = flatten(loop.body)
        return [stmts[0], loop.replace(body=seq([body[0], Yield([ConstInt(1)], body[1].span)])), stmts[2]]

    with pytest.raises(PassError, match=r"'acc' is declared Tensor\[\[64\], FP32\] but yielded") as err:
        type_check()(_edit_main(bad_yield))
    assert err.value.line == 15


def test_return_and_loop_bound_types():
    def bad_return(stmts):
        return stmts[:-1] + [Return([ConstInt(3)], stmts[-1].span)]

    with pytest.raises(PassError, match=r"returns Scalar\[INDEX\] where the function declares "
                                        r"Tensor\[\[64\], FP32\]") as err:
        type_check()(_edit_main(bad_return))
    assert err.value.line == 16

    def float_bound(stmts):
        f = Var("f", ScalarType(FP32))
        return [stmts[0], Assign(f, ConstFloat(2.0), stmts[0].span), stmts[1].replace(stop=f), stmts[2]]

    with pytest.raises(PassError, match=r"loop stop must be an integer scalar, got Scalar\[FP32\]") as err:
        type_check()(_edit_main(float_bound))
    assert err.value.line == 13

