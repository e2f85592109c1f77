"""Language forms PyPTO programs use: natural `while`, slices with computed bounds, literals
and INDEX values taking the declared integer type, `tuple[...]` return annotations, names
first bound inside a loop, re-bound inline parameters and the `pl.system` ordering ops."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.runtime import run

from ._round_trip import text_round_trip

# --- natural while ------------------------------------------------------------------------


@pl.program
class Countdown:
    @pl.function
    def count(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        x: pl.Scalar[pl.INT64] = 0
        while x < n:
            x = x + 1
        return x


def test_natural_while_parses_prints_and_round_trips():
    text = text_round_trip(Countdown)
    assert "while x < n:" in text


@pl.jit
def add_n_times(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        acc = pl.mul(t, 0.0)
        i: pl.Scalar[pl.INDEX] = 0
        while i < 3:
            acc = pl.add(acc, t)
            i = i + 1
        pl.store(acc, [0, 0], out)
    return out


def test_natural_while_carries_what_its_body_rebinds():
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    add_n_times(x, out)
    torch.testing.assert_close(out, 3 * x)


def test_natural_while_rejects_yield_and_non_scalar_conditions():
    with pytest.raises(pl.ParserSyntaxError, match="pl.yield_ in a natural while loop"):
        pl.parse("""
import plang as pl
@pl.function
def f(n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
    x: pl.Scalar[pl.INT64] = 0
    while x < n:
        y = pl.yield_(x + 1)
    return x
""")
    with pytest.raises(pl.ParserTypeError, match="a while condition must be a scalar"):
        pl.parse("""
import plang as pl
@pl.function
def f(a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
    while a:
        a = a
    return a
""")


# --- slices with computed bounds -------------------------------------------------------------

M, N, K, SPLIT = 64, 64, 512, 4
KS = K // SPLIT


@pl.jit
def split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.assemble(c, pl.full([M, N], dtype=pl.FP32, value=0.0), [0, 0])
    for ks in pl.parallel(0, SPLIT):
        with pl.at(level=pl.Level.CORE_GROUP):
            k0 = ks * KS
            partial = pl.matmul(a[:, k0 : k0 + KS], b[k0 : k0 + KS, :], out_dtype=pl.FP32)
            c = pl.assemble(c, partial, [0, 0], atomic=pl.AtomicType.Add)
    return c


def test_slice_bounds_computed_under_parallel():
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.zeros(M, N)
    split_k(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-3, atol=1e-3)


@pl.program
class Halves:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, x: pl.Tensor[[4, 256], pl.FP32], i: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]) -> pl.Tensor[[4, 64], pl.FP32]:
        col = i * 128
        lo = pl.load(x, [0, col], [4, 64])
        s = x[:, col + 64 : col + 128]
        out = pl.store(pl.add(lo, pl.load(s, [0, 0], [4, 64])), [0, 0], out)
        return out


def test_offset_bounds_of_the_same_terms_give_a_static_extent():
    text = Halves.as_python()
    assert "pl.tensor.slice(x, [4, 64], [0, col + 64])" in text  # extent 64, not a difference
    text_round_trip(Halves)


# --- integer typing: literals and INDEX values -------------------------------------------------


@pl.program
class Typed:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INT32]:
        j: pl.Scalar[pl.INT32] = n + 1
        w: pl.Scalar[pl.INDEX] = j
        return w + n * 2


def test_literal_and_index_values_take_the_declared_integer_type():
    assert "x: pl.Scalar[pl.INT64] = pl.const(0, pl.INT64)" in Countdown.as_python()
    text = text_round_trip(Typed)
    assert "j: pl.Scalar[pl.INT32] = pl.cast(n + 1, pl.INT32)" in text
    assert "w: pl.Scalar[pl.INDEX] = pl.cast(j, pl.INDEX)" in text
    assert "return pl.cast(w + n * 2, pl.INT32)" in text


def test_a_float_is_still_not_an_integer():
    with pytest.raises(pl.ParserTypeError, match="'j' is annotated Scalar\\[INT32\\]"):
        pl.parse("""
import plang as pl
@pl.function
def f(x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
    j: pl.Scalar[pl.INT32] = x + 1.0
    return x
""")


# --- tuple[...] return annotations ------------------------------------------------------------

T = pl.Tensor[[16, 64], pl.FP32]


@pl.program
class TwoOutputs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, a: pl.Out[T], b: pl.Out[T]) -> tuple[T, T]:
        t = pl.load(x, [0, 0], [16, 64])
        a = pl.store(pl.add(t, 1.0), [0, 0], a)
        b = pl.store(pl.mul(t, 2.0), [0, 0], b)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, a: pl.Out[T], b: pl.Out[T]) -> tuple[T, T]:
        a, b = self.k(x, a, b)
        return a, b


def test_tuple_return_annotation():
    text_round_trip(TwoOutputs)
    x, a, b = torch.randn(16, 64), torch.zeros(16, 64), torch.zeros(16, 64)
    run(TwoOutputs, x, a, b)
    torch.testing.assert_close(a, x + 1)
    torch.testing.assert_close(b, 2 * x)


# --- names first bound inside a loop ------------------------------------------------------------


@pl.jit
def last_block_scaled(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [0, i * 16], [16, 16])
            last = i
        pl.store(pl.mul(t, pl.cast(last, pl.FP32)), [0, 0], out)
    return out


def test_a_name_first_bound_in_a_loop_is_read_after_it():
    x, out = torch.randn(16, 64), torch.zeros(16, 16)
    last_block_scaled(x, out)
    torch.testing.assert_close(out, 3 * x[:, 48:])


# --- inline helpers re-binding an Out parameter inside a loop -----------------------------------


@pl.jit.inline
def add_one_by_blocks(x: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            k0 = i * 16
            o = pl.assemble(o, pl.add(x[:, k0 : k0 + 16], 1.0), [0, k0])
    return o


@pl.jit
def twice_plus_two(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.create_tensor([16, 64], dtype=pl.FP32)
    t = add_one_by_blocks(x, t)
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.mul(t, 2.0), [0, 0])
    return out


def test_inline_parameter_rebound_in_a_loop():
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    twice_plus_two(x, out)
    torch.testing.assert_close(out, 2 * (x + 1))
