"""Elementwise tile ops through the MLIR path vs torch, every dtype, on a tile whose width is
not a multiple of the vector width, loaded from an offset inside a larger tensor.

Tolerances: FP32 rtol 1e-6 (exact ops are compared exactly), transcendental FP32 rtol 2e-6;
FP16 / BF16 compute in FP32 and round once per op, so results equal torch's rounding of the
FP32 result (checked to one unit in the last place); integers are exact (wrapping).
"""

from __future__ import annotations

import pytest
import torch
from _kernel_util import FLOAT_DTYPES, INT_DTYPES, rand, region, tile_kernel

from plang.dtypes import BOOL, UINT8, DataType
from plang.ir.ops import make_call

SHAPE, TILE, OFF = (9, 150), (5, 100), (2, 17)
ALL = FLOAT_DTYPES + INT_DTYPES


def _torch_binary(op: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_floating_point():
        x, y = a.float(), b.float()
        r = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "maximum": torch.maximum(x, y),
             "minimum": torch.minimum(x, y), "fmod": torch.fmod(x, y)}[op]
        return r.to(a.dtype)
    x, y = a.long(), b.long()
    safe = torch.where(y == 0, torch.ones_like(y), y)
    r = {"add": x + y, "sub": x - y, "mul": x * y, "div": torch.div(x, safe, rounding_mode="trunc"),
         "maximum": torch.maximum(x, y), "minimum": torch.minimum(x, y),
         "fmod": torch.fmod(x, safe), "and_": x & y, "or_": x | y, "xor": x ^ y}[op]
    return r.to(a.dtype)  # wraps like the kernel


def _check(got: torch.Tensor, want: torch.Tensor, dtype: DataType, rtol: float = 1e-6) -> None:
    if dtype.is_float:
        torch.testing.assert_close(got.float(), want.float(), rtol=rtol if dtype.bits == 32 else 8e-3,
                                   atol=1e-30 if dtype.bits == 32 else 1e-6, equal_nan=True)
    else:
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    k = tile_kernel(f"b_{op}", [d, d], d, SHAPE, TILE, OFF,
                    lambda b, t: make_call(f"tile.{op}", [t[0], t[1]]))
    x, y = rand(SHAPE, d), rand(SHAPE, d)
    if op == "div" and d.is_float:
        y = torch.where(y.float().abs() < 0.1, torch.ones_like(y), y)
    out = torch.zeros(SHAPE, dtype=d.to_torch())
    k(x, y, out)
    _check(region(out, OFF, TILE), _torch_binary(op, region(x, OFF, TILE), region(y, OFF, TILE)), d)
    outside = out.clone()
    region(outside, OFF, TILE).zero_()
    assert not outside.any(), "store wrote outside the tile's region"


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", ["and_", "or_", "xor", "fmod"])
def test_integer_binary(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    extra = []
    if op == "xor":
        extra = [None]
    k = tile_kernel(f"i_{op}", [d, d], d, SHAPE, TILE, OFF,
                    lambda b, t: make_call(f"tile.{op}", [t[0], t[1]] + ([t[0]] if extra else [])))
    x, y = rand(SHAPE, d), rand(SHAPE, d)
    out = torch.zeros(SHAPE, dtype=d.to_torch())
    k(x, y, out)
    _check(region(out, OFF, TILE), _torch_binary(op, region(x, OFF, TILE), region(y, OFF, TILE)), d)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["adds", "subs", "muls", "maximums", "minimums"])
def test_scalar_forms(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    scalar = 3.0 if d.is_float else 3
    k = tile_kernel(f"s_{op}", [d], d, SHAPE, TILE, OFF,
                    lambda b, t: make_call(f"tile.{op}", [t[0], scalar]))
    x = rand(SHAPE, d)
    out = torch.zeros(SHAPE, dtype=d.to_torch())
    k(x, out)
    xs = region(x, OFF, TILE)
    _check(region(out, OFF, TILE), _torch_binary(op[:-1], xs, torch.full_like(xs, scalar)), d)


UNARY_TORCH = {"exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
               "recip": torch.reciprocal, "neg": torch.neg, "abs": torch.abs, "relu": torch.relu,
               "sin": torch.sin, "cos": torch.cos}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", sorted(UNARY_TORCH))
def test_float_unary(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    arg = "tile" if op == "relu" else "input"
    k = tile_kernel(f"u_{op}", [d], d, SHAPE, TILE, OFF,
                    lambda b, t: make_call(f"tile.{op}", [], {arg: t[0]}))
    low = 0.01 if op in ("log", "sqrt", "rsqrt") else -10.0
    x = rand(SHAPE, d, low, 10.0)
    out = torch.zeros(SHAPE, dtype=d.to_torch())
    k(x, out)
    want = UNARY_TORCH[op](region(x, OFF, TILE).float()).to(d.to_torch())
    _check(region(out, OFF, TILE), want, d, rtol=2e-6)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", ["neg", "abs", "relu", "not_"])
def test_int_unary(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    arg = "tile" if op == "relu" else "input"
    k = tile_kernel(f"iu_{op}", [d], d, SHAPE, TILE, OFF,
                    lambda b, t: make_call(f"tile.{op}", [], {arg: t[0]}))
    x = rand(SHAPE, d)
    out = torch.zeros(SHAPE, dtype=d.to_torch())
    k(x, out)
    xs = region(x, OFF, TILE)
    want = {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "not_": torch.bitwise_not}[op](xs)
    assert torch.equal(region(out, OFF, TILE), want)


def _flags(cmp: int, shape):
    """tile.cmp's packed mask selecting BOOL ones and zeros (what tensor.cmp lowers to)."""
    def body(b, t):
        mask = b.let("m", make_call("tile.cmp", [t[0], t[1]], {"cmp_type": cmp}))
        ones = b.let("ones", make_call("tile.full", [list(shape)], {"dtype": BOOL, "value": True}))
        zeros = b.let("zeros", make_call("tile.full", [list(shape)], {"dtype": BOOL, "value": False}))
        tmp = b.let("tmp", make_call("tile.create", [[1, 32]], {"dtype": UINT8}))
        return make_call("tile.sel", [mask, ones, zeros, tmp])
    return body


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("cmp", range(6))
def test_compare(cmp: int, dtype: str) -> None:
    d = DataType.from_name(dtype)
    k = tile_kernel("cmp", [d, d], BOOL, SHAPE, TILE, OFF, _flags(cmp, TILE))
    x = rand(SHAPE, d, -2, 2)
    y = torch.where(torch.rand(SHAPE) < 0.3, x, rand(SHAPE, d, -2, 2))
    out = torch.zeros(SHAPE, dtype=torch.bool)
    k(x, y, out)
    xs, ys = region(x, OFF, TILE), region(y, OFF, TILE)
    want = [xs == ys, xs != ys, xs < ys, xs <= ys, xs > ys, xs >= ys][cmp]
    assert torch.equal(region(out, OFF, TILE), want)


def test_compare_nan_semantics() -> None:
    from plang.dtypes import FP32

    k = tile_kernel("cmp_ne", [FP32, FP32], BOOL, (1, 4), (1, 4), (0, 0), _flags(1, (1, 4)))
    x = torch.tensor([[float("nan"), 1.0, float("inf"), 0.0]])
    out = torch.zeros(1, 4, dtype=torch.bool)
    k(x, x.clone(), out)
    assert torch.equal(out, x != x)


@pytest.mark.parametrize("dtype", ALL)
def test_select(dtype: str) -> None:
    d = DataType.from_name(dtype)

    def body(b, t):
        mask = b.let("m", make_call("tile.cmp", [t[0], t[1]], {"cmp_type": 4}))
        return make_call("tile.sel", [mask, t[0], t[1], t[0]])

    k = tile_kernel("sel", [d, d], d, SHAPE, TILE, OFF, body)
    x, y = rand(SHAPE, d), rand(SHAPE, d)
    out = torch.zeros(SHAPE, dtype=d.to_torch())
    k(x, y, out)
    xs, ys = region(x, OFF, TILE), region(y, OFF, TILE)
    assert torch.equal(region(out, OFF, TILE), torch.where(xs > ys, xs, ys))


@pytest.mark.parametrize("direction", ["row", "col"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "expdif"])
def test_expand_ops(direction: str, op: str) -> None:
    from plang.dtypes import FP32

    def body(b, t):
        scratch = [t[0]] if direction == "row" else []
        red = b.let("red", make_call(f"tile.{direction}_max", [t[0]] + scratch))
        return make_call(f"tile.{direction}_expand_{op}", [t[0], red])

    k = tile_kernel("expand", [FP32], FP32, SHAPE, TILE, OFF, body)
    x = rand(SHAPE, FP32)
    out = torch.zeros(SHAPE)
    k(x, out)
    xs = region(x, OFF, TILE)
    red = xs.amax(dim=1 if direction == "row" else 0, keepdim=True)
    want = {"add": xs + red, "sub": xs - red, "mul": xs * red, "div": xs / red,
            "max": torch.maximum(xs, red), "min": torch.minimum(xs, red),
            "expdif": torch.exp(xs - red)}[op]
    torch.testing.assert_close(region(out, OFF, TILE), want, rtol=2e-6, atol=1e-30)
