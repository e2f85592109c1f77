"""Data-dependent indexing: `gather` (flat or along an axis) and `scatter` (index form),
for both families, and `tile.mscatter` (a tile's elements stored to flat indices of a DDR
tensor)."""

from __future__ import annotations

import math

from ...dtypes import BF16, FP16, FP32, INT8, INT16, INT32
from ..types import Type, dim_value
from .common import (
    P,
    family,
    fmt_shape,
    normalize_axis,
    require_dim,
    require_dtype,
    require_rank,
    require_same_dtype,
    require_same_kind,
    require_same_shape,
    result_like,
)
from .registry import Bound, register

GATHER_DTYPES = (FP16, FP32, INT16, INT32)
SCATTER_DTYPES = (FP16, FP32, BF16, INT8, INT16, INT32)


def _gather(b: Bound) -> Type:
    src, index = b.input.type, b.index.type
    require_dtype(b, "input", src.dtype, GATHER_DTYPES)
    require_dtype(b, "index", index.dtype, (INT32, INT16) if src.dtype.bits == 16 else (INT32,))
    if b.dim is None:  # flat: input.reshape(-1)[index]
        require_rank(b, "index", index, 2)
        return result_like(index, src.dtype)
    if isinstance(b.dim, bool) or not isinstance(b.dim, int):
        raise b.bad_value(f"dim must be an int axis, got {b.dim!r}")
    require_same_kind(b, "index", index, "input", src)
    require_rank(b, "index", index, src.rank)
    axis = normalize_axis(b, "dim", b.dim, src.rank)
    for i, (got, limit) in enumerate(zip(index.shape, src.shape)):
        g, n = dim_value(got), dim_value(limit)
        if i != axis and g is not None and n is not None and g > n:
            raise b.fail(f"index {fmt_shape(index.shape)} exceeds input {fmt_shape(src.shape)} on axis {i} "
                         f"(only the gather axis {axis} may differ)")
    return result_like(index, src.dtype)


def _scatter(b: Bound) -> Type:
    dst, index, src = b.input.type, b.index.type, b.src.type
    require_dtype(b, "input", dst.dtype, SCATTER_DTYPES)
    require_rank(b, "input", dst, 2)
    if isinstance(b.dim, bool) or not isinstance(b.dim, int) or normalize_axis(b, "dim", b.dim, 2) != 1:
        raise b.bad_value(f"dim must be the last axis (-1 or 1), got {b.dim!r}")
    require_same_kind(b, "src", src, "input", dst)
    require_same_dtype(b, "src", src, "input", dst)
    require_same_shape(b, "index", index, "src", src)
    require_dtype(b, "index", index.dtype, (INT32,) if dst.dtype.bits == 32 else (INT16,))
    require_dim(b, f"src {fmt_shape(src.shape)} and input {fmt_shape(dst.shape)} need the same rows",
                src.shape[0], dst.shape[0])
    k, s = dim_value(src.shape[1]), dim_value(dst.shape[1])
    if k is not None and s is not None and k > s:
        raise b.fail(f"src {fmt_shape(src.shape)} has more columns than input {fmt_shape(dst.shape)}")
    return result_like(dst)


def _scatter_update(b: Bound) -> Type:
    dst, index, src = b.input.type, b.index.type, b.src.type
    require_dtype(b, "input", dst.dtype, SCATTER_DTYPES)
    if dst.rank not in (2, 4):
        raise b.fail(f"operand 'input' must have rank 2 [rows, d] or 4 [blocks, block_size, 1, d], "
                     f"got {fmt_shape(dst.shape)}")
    require_rank(b, "index", index, 2)
    if not index.dtype.is_int:
        raise b.fail(f"operand 'index' must hold integers, got {index.dtype.name}")
    require_rank(b, "src", src, dst.rank)
    require_same_kind(b, "src", src, "input", dst)
    require_same_dtype(b, "src", src, "input", dst)
    if isinstance(b.dim, bool) or b.dim != -2:
        raise b.bad_value(f"dim must be -2 (rows), got {b.dim!r}")
    require_dim(b, "src and input need the same row length", src.shape[-1], dst.shape[-1])
    counts = [dim_value(d) for d in (*index.shape, *src.shape[:-1])]
    if None not in counts and math.prod(counts[2:]) != counts[0] * counts[1]:
        raise b.fail(f"src {fmt_shape(src.shape)} needs one row per element of index "
                     f"{fmt_shape(index.shape)}")
    return result_like(dst)


def _mscatter(b: Bound) -> Type:
    src, index, out = b.src.type, b.idx.type, b.output_tensor.type
    require_dtype(b, "src", src.dtype, GATHER_DTYPES)
    require_dtype(b, "idx", index.dtype, (INT32,))
    require_same_shape(b, "idx", index, "src", src)
    require_same_dtype(b, "output_tensor", out, "src", src)
    return out


def _register_all() -> None:
    X = "X"
    family("gather", [P("input", X), P("index", X), P("dim", "attr", None)], _gather, unit="vector",
           doc="Gather by index: flat (`input.reshape(-1)[index]`, 2D INT32 index) or, with dim, along one "
               "axis (`out[b, k] = input[b, index[b, k]]` for dim=1, torch.gather); the result takes "
               "index's shape and input's dtype.")
    family("scatter", [P("input", X), P("index", X), P("src", X), P("dim", "attr", -1)], _scatter,
           unit="vector",
           doc="Scatter along the last axis of a 2D input: a copy of input with "
               "`out[b, index[b, k]] = src[b, k]` (torch.scatter); index has src's shape.")
    family("scatter_update", [P("input", X), P("index", X), P("src", X), P("dim", "attr", -2)],
           _scatter_update, unit="vector",
           doc="A copy of input with row `index.flat[k]` replaced by row k of src, in order (the last "
               "write to a row wins; an out-of-range index writes nothing); input [rows, d] with src "
               "[b * s, d], or input [blocks, block_size, 1, d] with src [b, s, 1, d]; index [b, s].")
    register("tile.mscatter", [P("src", "tile"), P("idx", "tile"), P("output_tensor", "tensor")], _mscatter,
             unit="memory", writes=("output_tensor",), reads=("src", "idx"),
             doc="Store each valid element of a tile to a flat (row-major) index of a DDR tensor: "
                 "`output_tensor.reshape(-1)[idx[i, j]] = src[i, j]`; an out-of-range index writes "
                 "nothing; returns the updated tensor.")


_register_all()
