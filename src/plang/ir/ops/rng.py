"""`random`: counter-based pseudo-random 32-bit values, for both families.

Element p of the value (row-major position over its shape) is lane `p % 4` of Philox4x32
(`rounds` rounds, 7 or 10) applied to the 128-bit counter `(counter0..counter3) + p // 4`
(little-endian words, with carry) under the 64-bit key `(key0, key1)`. The same seeds give
the same value on every backend (kernel and torch reference compute the same function); the
values are not bit-identical with Ascend's `pto.trandom`, whose lane schedule is its own.
"""

from __future__ import annotations

from ...dtypes import INT32, UINT32
from ..types import ScalarType, TensorType, TileType, Type, dim_value
from .common import P, fmt_shape, fmt_type, index_values, require_dtype_attr
from .registry import Bound, register

SEEDS = ("key0", "key1", "counter0", "counter1", "counter2", "counter3")
ROUNDS = (7, 10)
MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
"""Philox4x32 round multipliers (for counter words 0 and 2)."""
WEYL = (0x9E3779B9, 0xBB67AE85)
"""Philox4x32 key increments between rounds."""


def _random(tile: bool):
    def deduce(b: Bound) -> Type:
        for name in SEEDS:
            t = b[name].type
            if not (isinstance(t, ScalarType) and t.dtype.is_int):
                raise b.fail(f"seed {name!r} must be an integer scalar, got {fmt_type(t)}")
        dtype = require_dtype_attr(b, "dtype", (UINT32, INT32))
        if b.rounds not in ROUNDS:
            raise b.bad_value(f"rounds must be 7 or 10, got {b.rounds!r}")
        shape = index_values(b, "shape")
        if not shape or any(dim_value(d) is None for d in shape):
            raise b.fail(f"shape must be static, got {fmt_shape(shape)}")
        if not tile:
            return TensorType(shape, dtype)
        valid = index_values(b, "valid_shape") if b.valid_shape is not None else None
        fits = valid is None or len(valid) == len(shape) and all(
            dim_value(v) is None or 0 <= dim_value(v) <= dim_value(d) for v, d in zip(valid, shape))
        if not fits:
            raise b.bad_value(f"valid_shape {fmt_shape(valid)} must fit shape {fmt_shape(shape)}")
        return TileType(shape, dtype, None, valid)
    return deduce


def _register_all() -> None:
    seeds = [P(n, "scalar") for n in SEEDS]
    options = [P("dtype", "attr", UINT32), P("rounds", "attr", 10)]
    doc = ("Counter-based pseudo-random UINT32 / INT32 values: element p is lane p % 4 of Philox4x32-"
           "rounds of counter (counter0..3) + p // 4 under key (key0, key1); same seeds, same values.")
    register("tensor.random", [*seeds, P("shape", "index_list"), *options], _random(False), unit="vector",
             doc=doc)
    tile = [*seeds, P("shape", "index_list"), P("valid_shape", "index_list", None), *options]
    register("tile.random", tile, _random(True), unit="vector",
             doc=doc + " Only the valid region is written.")


_register_all()
