"""A write used as a statement (`pl.store(t, off, c)`, `pl.assemble(c, x, off)`, `c[...] = x`)
updates `c`, and `return c` after the core scope returns the written tensor — in loops
around and inside the scope, with several outputs, and in explicit InCore kernels.

Kernels live at module level so plang can read their source.
"""

import pytest
import torch

import plang as pl
from plang.passes import PassError

R, C, B = 128, 64, 32
RC = pl.Tensor[[R, C], pl.FP32]


@pl.jit
def one_scope(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def range_in_scope(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(R // B):
            pl.store(pl.exp(pl.load(a, [i * B, 0], [B, C])), [i * B, 0], c)
    return c


@pl.jit
def parallel_in_scope(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.parallel(R // B):
            pl.store(pl.mul(pl.load(a, [i * B, 0], [B, C]), 3.0), [i * B, 0], c)
    return c


@pl.jit
def scope_in_range(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(R // B):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.exp(pl.load(a, [i * B, 0], [B, C])), [i * B, 0], c)
    return c


@pl.jit
def scope_in_parallel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.parallel(R // B):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.neg(pl.load(a, [i * B, 0], [B, C])), [i * B, 0], c)
    return c


@pl.jit
def two_outputs_two_scopes(a: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [R, C])
        pl.store(pl.exp(t), [0, 0], c)
        pl.store(pl.add(t, t), [0, 0], d)
    with pl.at(level=pl.Level.CORE_GROUP):
        top = pl.load(c, [0, 0], [B, C])
        pl.store(pl.add(top, 1.0), [0, 0], c)
    return c, d


@pl.jit
def assemble_and_subscript(a: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.assemble(c, pl.exp(a), [0, 0])
        d[:, :] = pl.sqrt(a)
    return c, d


@pl.jit.incore
def exp_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    pl.store(pl.exp(pl.load(a, [0, 0], [R, C])), [0, 0], c)
    return c


@pl.jit
def calls_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = exp_kernel(a, c)
    return c


@pl.program
class Explicit:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: RC, c: pl.Out[RC]) -> RC:
        for i in pl.range(R // B):
            pl.store(pl.abs(pl.load(a, [i * B, 0], [B, C])), [i * B, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: RC, c: pl.Out[RC]) -> RC:
        c = self.k(a, c)
        return c


@pl.program
class StaleRead:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: RC, c: pl.Out[RC]) -> RC:
        pl.store(pl.abs(pl.load(a, [0, 0], [R, C])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: RC, c: pl.Out[RC]) -> RC:
        self.k(a, c)
        return c


def _a() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(R, C)


@pytest.mark.parametrize("kernel, reference", [
    (range_in_scope, torch.exp), (parallel_in_scope, lambda a: a * 3.0), (scope_in_range, torch.exp),
    (scope_in_parallel, torch.neg), (calls_kernel, torch.exp),
])
def test_bare_stores_write_the_returned_output(kernel, reference):
    a, c = _a(), torch.zeros(R, C)
    kernel(a, c)
    torch.testing.assert_close(c, reference(a))


def test_hello_world_idiom():
    a, b, c = _a(), torch.full((R, C), 3.0), torch.zeros(R, C)
    one_scope(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_two_outputs_and_a_second_scope_reading_the_first_ones_write():
    a, c, d = _a(), torch.zeros(R, C), torch.zeros(R, C)
    two_outputs_two_scopes(a, c, d)
    expected = a.exp()
    expected[:B] += 1.0
    torch.testing.assert_close(c, expected)
    torch.testing.assert_close(d, a + a)


def test_bare_assemble_and_subscript_write():
    a = _a().abs()
    c, d = torch.zeros(R, C), torch.zeros(R, C)
    assemble_and_subscript(a, c, d)
    torch.testing.assert_close(c, a.exp())
    torch.testing.assert_close(d, a.sqrt())


def test_explicit_incore_kernel_with_bare_stores_in_a_loop():
    a, c = _a(), torch.zeros(R, C)
    pl.compile(Explicit, entry="main")(a, c)
    torch.testing.assert_close(c, a.abs())


def test_reading_an_out_argument_after_a_bare_kernel_call_is_still_an_error():
    with pytest.raises(PassError, match=r"\[InOutUseValid\]: 'c' was passed to 'k'"):
        pl.compile(StaleRead, entry="main")
