"""Python operators on tiles / tensors build ops; the op chains are checked by evaluating them
with numpy against numpy's own operators (Python semantics: `%` takes the divisor's sign)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import plang as pl
from plang.ir import Assign, Call, ConstBool, ConstFloat, ConstInt, Var, assert_structural_equal, flatten

_NUMPY_OPS = {
    "add": np.add, "adds": np.add, "sub": np.subtract, "subs": np.subtract,
    "mul": np.multiply, "muls": np.multiply, "div": np.divide, "divs": np.divide,
    "fmod": np.fmod, "fmods": np.fmod, "recip": lambda x: 1 / x, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "expands": lambda t, s: np.full_like(t, s),
}
_CMP = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def evaluate(e, env):
    """A numpy value of an elementwise op tree (the ops operators lower to)."""
    if isinstance(e, Var):
        return env[e]
    if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
        return e.value
    assert isinstance(e, Call), e
    short = e.op.short_name
    args = [evaluate(a, env) for a in e.args]
    if short in ("cmp", "cmps"):
        return _CMP[e.kwargs.get("cmp_type", 0)](*args)
    return _NUMPY_OPS[short](*args)


def parse_kernel(body: str, dtype: str = "FP32"):
    lines = "\n".join("    " + ln for ln in body.strip().splitlines())
    src = f"""
import plang as pl


@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[4, 8], pl.{dtype}], b: pl.Tensor[[4, 8], pl.{dtype}]):
    x = pl.load(a, [0, 0], [4, 8])
    y = pl.load(b, [0, 0], [4, 8])
{lines}
"""
    fn = pl.parse(src)
    assert_structural_equal(pl.parse(fn.as_python()), fn)
    return fn


def run(fn, x, y):
    stmts = [s for s in flatten(fn.body) if isinstance(s, Assign)]
    env = {stmts[0].var: x, stmts[1].var: y}
    for s in stmts[2:]:
        env[s.var] = evaluate(s.value, env)
    return {s.var.name: env[s.var] for s in stmts[2:]}


RNG = np.random.default_rng(7)
X = RNG.uniform(-4, 4, (4, 8)).astype(np.float32)
Y = (RNG.uniform(0.5, 3, (4, 8)) * RNG.choice([-1, 1], (4, 8))).astype(np.float32)


def test_comparisons_build_cmp_with_cmp_type():
    fn = parse_kernel("lt = x < y\nle = x <= y\neq = x == y\nne = x != 0.5\ngt = x > 0.0\nge = x >= y\n"
                      "mirrored = 1.0 < x\nmirrored_le = 0.0 >= x")
    got = run(fn, X, Y)
    expect = {"lt": X < Y, "le": X <= Y, "eq": X == Y, "ne": X != 0.5, "gt": X > 0, "ge": X >= Y,
              "mirrored": 1.0 < X, "mirrored_le": 0.0 >= X}
    for k, v in expect.items():
        np.testing.assert_array_equal(got[k], v, err_msg=k)
    calls = {s.var.name: s.value for s in flatten(fn.body) if isinstance(s, Assign)}
    assert calls["lt"].op.name == "tile.cmp" and calls["lt"].kwargs["cmp_type"] == 2
    assert calls["mirrored"].op.name == "tile.cmps" and calls["mirrored"].kwargs["cmp_type"] == 4
    assert calls["ge"].type.dtype is pl.UINT8  # a tile comparison is the reference's packed predicate mask


def test_scalar_on_the_left_of_sub_and_div():
    fn = parse_kernel("s = 1.0 - x\nd = 2.0 / y\nadd = 3.0 + x\nmul = 0.5 * x")
    got = run(fn, X, Y)
    np.testing.assert_array_equal(got["s"], np.float32(1.0) - X)
    np.testing.assert_array_equal(got["d"], np.float32(2.0) / Y)
    np.testing.assert_array_equal(got["add"], X + np.float32(3.0))
    np.testing.assert_array_equal(got["mul"], X * np.float32(0.5))


def test_modulo_follows_python_floor_semantics():
    fn = parse_kernel("r = x % y\nrs = x % 1.5\nrn = x % -1.5\nleft = 5.0 % y")
    got = run(fn, X, Y)
    np.testing.assert_allclose(got["r"], np.mod(X, Y), rtol=0, atol=1e-6)
    np.testing.assert_allclose(got["rs"], np.mod(X, np.float32(1.5)), rtol=0, atol=1e-6)
    np.testing.assert_allclose(got["rn"], np.mod(X, np.float32(-1.5)), rtol=0, atol=1e-6)
    np.testing.assert_allclose(got["left"], np.mod(np.float32(5.0), Y), rtol=0, atol=1e-6)


def test_integer_modulo_is_exact():
    fn = parse_kernel("r = x % y\nrs = x % 3\nrn = x % -3", dtype="INT32")
    xi = RNG.integers(-50, 50, (4, 8)).astype(np.int32)
    yi = (RNG.integers(1, 9, (4, 8)) * RNG.choice([-1, 1], (4, 8))).astype(np.int32)
    got = run(fn, xi, yi)
    np.testing.assert_array_equal(got["r"], xi % yi)
    np.testing.assert_array_equal(got["rs"], xi % 3)
    np.testing.assert_array_equal(got["rn"], xi % -3)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5, 8, -1, -3, 0.5, -0.5, 2.0])
def test_power_with_constant_exponent(k):
    base = np.abs(Y) if abs(k) == 0.5 else Y
    got = run(parse_kernel(f"p = y ** {k}"), base, base)["p"]
    np.testing.assert_allclose(got, np.power(base.astype(np.float64), k), rtol=1e-5)


@pytest.mark.parametrize("body, message, hint", [
    ("p = x ** 1.5", r"`\*\*` on a tile / tensor needs a constant integer exponent or ±0\.5, got float 1\.5",
     "pl.exp"),
    ("p = x ** y", r"needs a constant integer exponent or ±0\.5, got Tile", "pl.exp"),
    ("p = 2.0 ** x", r"`\*\*` with a tile / tensor exponent is not supported", "pl.exp"),
    ("q = x // y", r"operator '//' is not defined on tiles / tensors", "pl.cast"),
    ("m = 0.0 < x < y", r"`and` of tile / tensor values is not supported", "pl.and_"),
    ("m = not x", r"`not` of a tile / tensor is not supported", "pl.not_"),
])
def test_operators_without_an_op_keep_a_clear_error(body, message, hint):
    with pytest.raises(pl.ParserTypeError, match=message) as info:
        parse_kernel(body)
    assert hint in str(info.value)
    assert info.value.line == 9


def test_tensor_operands_use_tensor_ops():
    src = """
import plang as pl


@pl.function
def f(a: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[4, 8], pl.FP32]):
    m = a <= b
    s = 1.0 - a
    r = a % b
    p = a ** 2
"""
    fn = pl.parse(src)
    ops = {s.var.name: s.value.op.name for s in flatten(fn.body)}
    assert ops == {"m": "tensor.cmp", "s": "tensor.sub", "r": "tensor.fmod", "p": "tensor.mul"}
    assert_structural_equal(pl.parse(fn.as_python()), fn)
