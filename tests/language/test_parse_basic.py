"""Focused parser tests: each construct parses to the hand-built IR."""

from __future__ import annotations

import pytest

import plang as pl
from plang.dtypes import FP32, INDEX
from plang.ir import (
    Call,
    FunctionType,
    GlobalVar,
    ParamDirection,
    Program,
    TensorType,
    TileType,
    assert_structural_equal,
)
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call

T128 = TensorType([128, 128], FP32)


def test_thin_path_program_matches_hand_built_ir():
    @pl.program
    class Add:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[128, 128], pl.FP32],
            b: pl.Tensor[[128, 128], pl.FP32],
            c: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
        ) -> pl.Tensor[[128, 128], pl.FP32]:
            ta = pl.load(a, [0, 0], [128, 128])
            tb = pl.load(b, [0, 0], [128, 128])
            tc = pl.add(ta, tb)
            c = pl.store(tc, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[128, 128], pl.FP32],
            b: pl.Tensor[[128, 128], pl.FP32],
            c: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
        ) -> pl.Tensor[[128, 128], pl.FP32]:
            c = self.kernel(a, b, c)
            return c

    b = IRBuilder()
    with b.program("Add") as prog:
        with b.function("kernel", type=FunctionType.InCore, return_types=[T128]) as f:
            a, bb = f.param("a", T128), f.param("b", T128)
            c = f.param("c", T128, ParamDirection.Out)
            ta = b.let("ta", make_call("tile.load", [a, [0, 0], [128, 128]]))
            tb = b.let("tb", make_call("tile.load", [bb, [0, 0], [128, 128]]))
            tc = b.let("tc", make_call("tile.add", [ta, tb]))
            b.assign(c, make_call("tile.store", [tc, [0, 0], c]))
            b.ret(c)
        with b.function("main", type=FunctionType.Orchestration, return_types=[T128]) as f:
            a, bb = f.param("a", T128), f.param("b", T128)
            c = f.param("c", T128, ParamDirection.Out)
            b.assign(c, Call(GlobalVar("kernel"), [a, bb, c], {}, T128))
            b.ret(c)
    assert isinstance(Add, Program)
    assert_structural_equal(Add, prog.program)
    # the rebinding of `c` reuses the parameter Var (non-SSA default)
    kernel = Add.functions["kernel"]
    assert kernel.body.stmts[3].var is kernel.params[2]
    assert isinstance(kernel.body.stmts[0].value.type, TileType)


def test_wrapper_called_eagerly_raises_clear_error():
    with pytest.raises(pl.EagerCallError, match="only works inside a DSL function"):
        pl.add(1, 2)
    with pytest.raises(pl.EagerCallError, match="only works inside a DSL function"):
        pl.tile.load([1, 2], [0], [1])


def test_lone_int_literal_is_index():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m = n + 1
        return m

    value = f.body.stmts[0].value
    assert value.rhs.type.dtype is INDEX
