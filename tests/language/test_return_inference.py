"""Return types of functions without a `->` annotation come from their `return` statements,
also at the call sites of other program functions (callees are parsed first)."""

from __future__ import annotations

import pytest

import plang as pl
from plang.dtypes import FP32, INT64
from plang.ir import (
    Call,
    GlobalVar,
    ScalarType,
    TensorType,
    TupleType,
    assert_structural_equal,
    flatten,
    structural_equal,
)
from plang.passes import get_property

T64 = TensorType([64, 64], FP32)


def same(a, b) -> bool:
    return structural_equal(list(a), list(b)) if isinstance(a, (list, tuple)) else structural_equal(a, b)

ORCH_BEFORE_KERNEL = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32]):
        c = pl.create_tensor([64, 64], dtype=pl.FP32)
        r = self.k(a, b, c)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        x = pl.load(a, [0, 0], [64, 64])
        y = pl.load(b, [0, 0], [64, 64])
        c = pl.store(pl.add(x, y), [0, 0], c)
        return c
"""


def _calls(fn, name: str) -> list[Call]:
    out = []
    for s in flatten(fn.body):
        v = getattr(s, "value", None)
        if isinstance(v, Call) and isinstance(v.op, GlobalVar) and v.op.name == name:
            out.append(v)
    return out


def test_call_of_unannotated_kernel_gets_its_return_type():
    prog = pl.parse(ORCH_BEFORE_KERNEL)
    k, main = prog.functions["k"], prog.functions["main"]
    assert list(prog.functions) == ["main", "k"]  # source order is kept
    assert same(k.return_types, [T64])
    (call,) = _calls(main, "k")
    assert same(call.type, T64)
    assert same(main.return_types, [T64])
    get_property("TypeCheck").verify(prog)
    assert_structural_equal(pl.parse(prog.as_python()), prog)


def test_decorated_program_and_chain_of_unannotated_functions():
    @pl.program
    class Chain:
        @pl.function
        def top(self, a: pl.Tensor[[64, 64], pl.FP32]):
            r = self.mid(a)
            return r

        @pl.function
        def mid(self, a: pl.Tensor[[64, 64], pl.FP32]):
            t, n = self.leaf(a)
            return t, n

        @pl.function
        def leaf(self, a: pl.Tensor[[64, 64], pl.FP32]):
            return a, pl.tensor.dim(a, 0)

    pair = TupleType([T64, ScalarType(INT64)])  # tensor.dim gives an INT64
    assert same(Chain.functions["leaf"].return_types, pair.types)
    assert same(Chain.functions["mid"].return_types, pair.types)
    assert same(_calls(Chain.functions["mid"], "leaf")[0].type, pair)
    assert same(_calls(Chain.functions["top"], "mid")[0].type, pair)
    get_property("TypeCheck").verify(Chain)
    assert_structural_equal(pl.parse(Chain.as_python()), Chain)


def test_submit_of_unannotated_kernel():
    prog = pl.parse(ORCH_BEFORE_KERNEL.replace("r = self.k(a, b, c)", "r, tid = pl.submit(self.k, a, b, c)"))
    main = prog.functions["main"]
    submitted = next(s.value for s in flatten(main.body) if isinstance(getattr(s, "value", None), Call)
                     and isinstance(s.value.op, GlobalVar))
    assert same(submitted.type.types[0], T64)
    assert same(main.return_types, [T64])


def test_lone_function_return_types_come_from_return():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        x = pl.load(a, [0, 0], [64, 64])
        out = pl.store(pl.exp(x), [0, 0], out)
        return out

    assert same(k.return_types, [T64])
    assert_structural_equal(pl.parse(k.as_python()), k)


def test_function_without_return_has_no_return_types():
    @pl.function
    def f(a: pl.Tensor[[64, 64], pl.FP32]):
        b = pl.exp(a)  # noqa: F841

    assert list(f.return_types) == []


@pytest.mark.parametrize("body, cycle", [
    ("r = self.f(a)\n        return r", "f -> f"),
    ("r = self.g(a)\n        return r", "f -> g -> f"),
])
def test_recursion_through_unannotated_functions_is_reported(body, cycle):
    src = f"""
import plang as pl


@pl.program
class R:
    @pl.function
    def f(self, a: pl.Tensor[[64, 64], pl.FP32]):
        {body}

    @pl.function
    def g(self, a: pl.Tensor[[64, 64], pl.FP32]):
        r = self.f(a)
        return r
"""
    with pytest.raises(pl.ParserTypeError, match=rf"called recursively \({cycle}\)") as info:
        pl.parse(src)
    assert "annotate the return type" in str(info.value)


def test_recursion_through_annotated_function_is_accepted():
    @pl.program
    class Ok:
        @pl.function
        def f(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            r = self.g(a)
            return r

        @pl.function
        def g(self, a: pl.Tensor[[64, 64], pl.FP32]):
            r = self.f(a)
            return r

    assert same(Ok.functions["g"].return_types, [T64])


def test_returning_a_call_of_several_values_returns_each_of_them():
    @pl.program
    class Pair:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
              d: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> tuple[pl.Tensor[[64, 64], pl.FP32],
                                                                pl.Tensor[[64, 64], pl.FP32]]:
            t = pl.load(a, [0, 0], [64, 64])
            return pl.store(t, [0, 0], c), pl.store(pl.add(t, t), [0, 0], d)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                 d: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> tuple[pl.Tensor[[64, 64], pl.FP32],
                                                                   pl.Tensor[[64, 64], pl.FP32]]:
            return self.k(a, c, d)  # two values, as the declaration says

    main = Pair.get_function("main")
    ret = flatten(main.body)[-1]
    assert len(ret.values) == 2 and same([v.type for v in ret.values], [T64, T64])
    assert pl.parse(Pair.as_python()) is not None
