"""Torch reference of rem, carry arithmetic, prelu, batch_matmul, arange, tri, gather and
scatter, written in the DSL and checked against numpy."""
# ruff: noqa: E501  (DSL source text)

from __future__ import annotations

import textwrap

import numpy as np
import torch

import plang as pl
from plang.debug import run_torch_ref


def kernel(params: str, out: str, body: str):
    """An InCore kernel `k(<params>, out)` whose body ends by storing tile `r` into `out`."""
    origin = ", ".join(["0"] * (out.split("]")[0].count(",") + 1))
    src = f"""
import plang as pl


@pl.function(type=pl.FunctionType.InCore)
def k({params}, out: pl.Out[{out}]) -> {out}:
{textwrap.indent(textwrap.dedent(body).strip(), "    ")}
    out = pl.store(r, [{origin}], out)
    return out
"""
    return pl.parse(src)


def run(fn, *inputs, out):
    got = run_torch_ref(fn, *[torch.from_numpy(np.ascontiguousarray(x)) for x in inputs], out)
    assert got is out
    return out.numpy()


RNG = np.random.default_rng(7)
F = "pl.Tensor[[8, 16], pl.FP32]"
I = "pl.Tensor[[8, 16], pl.INT32]"


def test_rem_takes_the_sign_of_the_divisor():
    fn = kernel(f"a: {F}, b: {F}", F, """
        x = pl.load(a, [0, 0], [8, 16])
        y = pl.load(b, [0, 0], [8, 16])
        r = pl.rem(x, y, pl.tile.create([2, 16], pl.FP32))""")
    a = RNG.uniform(-10, 10, (8, 16)).astype(np.float32)
    b = RNG.choice([-3.0, -1.5, 2.0, 2.5], (8, 16)).astype(np.float32)
    np.testing.assert_allclose(run(fn, a, b, out=torch.zeros(8, 16)), np.mod(a, b), rtol=1e-6, atol=1e-5)


def test_rems_on_integers():
    fn = kernel(f"a: {I}", I, """
        x = pl.load(a, [0, 0], [8, 16])
        r = pl.rems(x, -3, pl.tile.create([1, 16], pl.INT32))""")
    a = RNG.integers(-50, 50, (8, 16), dtype=np.int32)
    assert np.array_equal(run(fn, a, out=torch.zeros(8, 16, dtype=torch.int32)), np.mod(a, -3))


def test_carry_arithmetic_and_prelu():
    fn = kernel(f"a: {F}, b: {F}, c: {F}", F, """
        x = pl.load(a, [0, 0], [8, 16])
        y = pl.load(b, [0, 0], [8, 16])
        carry = pl.load(c, [0, 0], [8, 16])
        s = pl.addc(x, y, carry)
        d = pl.subsc(s, 2.0, carry)
        r = pl.prelu(pl.subc(d, y, carry), y, pl.tile.create([8, 16], pl.FP32))""")
    a, b = RNG.standard_normal((2, 8, 16)).astype(np.float32)
    c = RNG.integers(0, 2, (8, 16)).astype(np.float32)
    d = (a + b + c) - 2.0 + c - b + c
    np.testing.assert_allclose(run(fn, a, b, c, out=torch.zeros(8, 16)), np.where(d >= 0, d, b * d), rtol=1e-5, atol=1e-5)


def test_batch_matmul_broadcasts_the_batch():
    fn = kernel("a: pl.Tensor[[2, 8, 16], pl.FP16], b: pl.Tensor[[16, 4], pl.FP16]", "pl.Tensor[[2, 8, 4], pl.FP32]", """
        x = pl.load(a, [0, 0, 0], [2, 8, 16])
        y = pl.load(b, [0, 0], [16, 4])
        r = pl.batch_matmul(x, y)""")
    a = RNG.standard_normal((2, 8, 16)).astype(np.float16)
    b = RNG.standard_normal((16, 4)).astype(np.float16)
    expect = np.matmul(a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_allclose(run(fn, a, b, out=torch.zeros(2, 8, 4)), expect, rtol=1e-5, atol=1e-4)


def test_arange_ascending_and_descending():
    out = "pl.Tensor[[1, 16], pl.INT32]"
    up = kernel("n: pl.Scalar[pl.INT32]", out, "r = pl.arange(n, [1, 16])")
    assert np.array_equal(run_torch_ref(up, 5, torch.zeros(1, 16, dtype=torch.int32)).numpy(), np.arange(5, 21)[None])
    down = kernel("n: pl.Scalar[pl.INT32]", out, "r = pl.arange(3, [1, 16], descending=True)")
    assert np.array_equal(run_torch_ref(down, 0, torch.zeros(1, 16, dtype=torch.int32)).numpy(),
                          np.arange(3, -13, -1)[None])


def test_tensor_level_arange():
    src = """
import plang as pl


@pl.function
def f(out: pl.Out[pl.Tensor[[1, 8], pl.INT16]]) -> pl.Tensor[[1, 8], pl.INT16]:
    out = pl.arange(-2, [1, 8], dtype=pl.INT16)
    return out
"""
    got = run_torch_ref(pl.parse(src), torch.zeros(1, 8, dtype=torch.int16))
    assert got.dtype == torch.int16 and np.array_equal(got.numpy(), np.arange(-2, 6)[None])


def test_tri_lower_and_upper():
    out = "pl.Tensor[[8, 12], pl.FP32]"
    lower = kernel("d: pl.Scalar[pl.INDEX]", out, "r = pl.tri(d, [8, 12], dtype=pl.FP32)")
    for d in (-2, 0, 3):
        assert np.array_equal(run_torch_ref(lower, d, torch.zeros(8, 12)).numpy(), np.tril(np.ones((8, 12)), d))
    upper = kernel("d: pl.Scalar[pl.INDEX]", out, "r = pl.tri(1, [8, 12], valid_shape=[5, 12], dtype=pl.FP32, upper=True)")
    expect = np.triu(np.ones((8, 12)), 1)
    expect[5:] = 0
    assert np.array_equal(run_torch_ref(upper, 0, torch.zeros(8, 12)).numpy(), expect)


def test_gather_along_an_axis_and_flat():
    idx_t = "pl.Tensor[[8, 8], pl.INT32]"
    along = kernel(f"a: {F}, i: {idx_t}", "pl.Tensor[[8, 8], pl.FP32]", """
        x = pl.load(a, [0, 0], [8, 16])
        idx = pl.load(i, [0, 0], [8, 8])
        r = pl.gather(x, 1, idx)""")
    a = RNG.standard_normal((8, 16)).astype(np.float32)
    i = RNG.integers(0, 16, (8, 8), dtype=np.int32)
    assert np.array_equal(run(along, a, i, out=torch.zeros(8, 8)), np.take_along_axis(a, i, axis=1))
    flat = kernel(f"a: {F}, i: pl.Tensor[[2, 8], pl.INT32]", "pl.Tensor[[2, 8], pl.FP32]", """
        x = pl.load(a, [0, 0], [8, 16])
        r = pl.gather(x, pl.load(i, [0, 0], [2, 8]))""")
    j = RNG.integers(0, 128, (2, 8), dtype=np.int32)
    assert np.array_equal(run(flat, a, j, out=torch.zeros(2, 8)), a.reshape(-1)[j])


def test_scatter_writes_src_at_the_indexed_columns():
    fn = kernel(f"a: {F}, i: pl.Tensor[[8, 4], pl.INT32], s: pl.Tensor[[8, 4], pl.FP32]", F, """
        x = pl.load(a, [0, 0], [8, 16])
        r = pl.scatter(x, dim=-1, index=pl.load(i, [0, 0], [8, 4]), src=pl.load(s, [0, 0], [8, 4]))""")
    a = RNG.standard_normal((8, 16)).astype(np.float32)
    i = np.stack([RNG.permutation(16)[:4] for _ in range(8)]).astype(np.int32)
    s = RNG.standard_normal((8, 4)).astype(np.float32)
    expect = a.copy()
    for row in range(8):
        expect[row, i[row]] = s[row]
    assert np.array_equal(run(fn, a, i, s, out=torch.zeros(8, 16)), expect)
