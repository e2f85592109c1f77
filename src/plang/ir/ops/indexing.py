"""Data-dependent indexing: `gather` (flat or along an axis) and `scatter` (index form),
for both families; `tile.mscatter` (a tile's elements stored to flat indices of a DDR
tensor) and its inverse `tile.mgather` (rows or elements of a DDR tensor gathered into a
tile); `tile.gatherb` (32-byte blocks of a tile gathered by byte offsets)."""

from __future__ import annotations

import math

from ...dtypes import BF16, FP16, FP32, INT8, INT16, INT32, UINT8, UINT16, UINT32, DataType
from ..enums import MemorySpace
from ..types import TensorType, TileType, Type, dim_value
from .common import (
    P,
    const_dim,
    family,
    fmt_shape,
    index_values,
    kind,
    mode_name,
    normalize_axis,
    require_dim,
    require_dtype,
    require_memory,
    require_rank,
    require_same_dtype,
    require_same_kind,
    require_same_shape,
    result_like,
    valid_of,
)
from .registry import Bound, register

GATHER_DTYPES = (FP16, FP32, INT16, INT32)
SCATTER_DTYPES = (FP16, FP32, BF16, INT8, INT16, INT32)
PAYLOAD_DTYPES = (INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16, FP32)
"""What `gatherb` and `mgather` move: 8-, 16- and 32-bit integers and floats."""
BLOCK_BYTES = 32
"""The unit `gatherb` moves: one 32-byte block per offset."""
COALESCE = ("row", "elem")
GATHER_OOB = ("undefined", "clamp", "wrap", "zero")
"""`mgather`'s index policies, in the order of their integer codes. An index is unsigned; one
past the end reads zeros under "undefined" (as under "zero": plang never reads outside the
tensor), the last row / element under "clamp", and index mod extent under "wrap"."""


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


def _gatherb(b: Bound) -> Type:
    src, offset = b.src.type, b.offset.type
    require_dtype(b, "src", src.dtype, PAYLOAD_DTYPES)
    out_dtype = src.dtype if b.output_dtype is None else b.output_dtype
    if not isinstance(out_dtype, DataType) or out_dtype not in PAYLOAD_DTYPES:
        raise b.fail(f"output_dtype must be one of {', '.join(d.name for d in PAYLOAD_DTYPES)}, "
                     f"got {getattr(out_dtype, 'name', out_dtype)!r}")
    require_dtype(b, "offset", offset.dtype, (UINT32,))
    require_rank(b, "src", src, 2)
    require_rank(b, "offset", offset, 2)
    for name, t in (("src", src), ("offset", offset)):
        if None in (dim_value(d) for d in t.shape):
            raise b.fail(f"operand {name!r} needs a static shape, got {fmt_shape(t.shape)}")
    cols = dim_value(offset.shape[1])
    if cols <= 0 or cols % 8:
        raise b.fail(f"offset rows must hold a positive multiple of 8 offsets (32-byte rows), got {cols}")
    per_block = BLOCK_BYTES // out_dtype.itemsize
    rows, valid_cols = valid_of(offset)
    c = dim_value(valid_cols)
    valid = [rows, const_dim(c * per_block) if c is not None else valid_cols * per_block]
    return TileType([offset.shape[0], const_dim(cols * per_block)], out_dtype, None, valid)


def _mgather(b: Bound) -> Type:
    mem, idx = b.mem.type, b.idx.type
    require_dtype(b, "mem", mem.dtype, PAYLOAD_DTYPES)
    require_dtype(b, "idx", idx.dtype, (INT32,))
    require_rank(b, "idx", idx, 2)
    coalesce = mode_name(b.coalesce, COALESCE)
    if coalesce is None:
        raise b.bad_value(f"coalesce must be 'row', 'elem', 0 or 1, got {b.coalesce!r}")
    if mode_name(b.gather_oob, GATHER_OOB) is None:
        raise b.bad_value(f"gather_oob must be 'undefined', 'clamp', 'wrap', 'zero' or 0..3, "
                          f"got {b.gather_oob!r}")
    target = require_memory(b, "target_memory", (MemorySpace.Vec, MemorySpace.Mat)) or MemorySpace.Vec
    mat = target is MemorySpace.Mat
    if not isinstance(idx, TensorType if mat else TileType):
        raise b.fail(f"operand 'idx' must be a {'DDR tensor' if mat else 'tile'} for "
                     f"MemorySpace.{target.name} output, got {kind(idx)}")
    if b.scratch is not None and not (mat and coalesce == "elem"):
        raise b.fail("operand 'scratch' is taken only by the Mat element gather")
    if b.valid_shape is not None and not mat:
        raise b.fail("valid_shape is taken only by Mat output (a Vec result is valid where idx is)")
    if coalesce == "row":
        if mem.rank < 2 or dim_value(mem.shape[-1]) is None:
            raise b.fail(f"row mode needs mem of rank >= 2 with a static row length, "
                         f"got {fmt_shape(mem.shape)}")
        r, c = (dim_value(d) for d in idx.shape)
        if (1 not in (r, c)) or (mat and r != 1):
            raise b.fail(f"row mode takes idx of shape [1, R]{'' if mat else ' or [R, 1]'}, "
                         f"got {fmt_shape(idx.shape)}")
        along = 1 if r == 1 else 0
        shape = [idx.shape[along], mem.shape[-1]]
        valid = [valid_of(idx)[along], mem.shape[-1]]
    else:
        shape, valid = list(idx.shape), list(valid_of(idx))
    if not mat:
        return TileType(shape, mem.dtype, None, valid)
    return TileType(shape, mem.dtype, MemorySpace.Mat, _mat_valid(b, mem.dtype, shape, coalesce))


def _mat_valid(b: Bound, dtype: DataType, shape: list, coalesce: str) -> list | None:
    """The Mat form's checks (whole 16-row, 32-byte blocks; the element form's scratch) and
    its valid region."""
    rows, cols = (dim_value(d) for d in shape)
    if rows is None or cols is None or rows % 16 or cols % (BLOCK_BYTES // dtype.itemsize):
        raise b.fail(f"Mat output {fmt_shape(shape)} must be static, with rows a multiple of 16 and "
                     f"columns a multiple of {BLOCK_BYTES // dtype.itemsize} (32 bytes of {dtype.name})")
    if coalesce == "elem":
        if b.scratch is None:
            raise b.fail("the Mat element gather needs a DDR scratch tensor (scratch=) of mem's dtype")
        scratch = b.scratch.type
        require_same_dtype(b, "scratch", scratch, "mem", b.mem.type)
        n = math.prod(dim_value(d) or 0 for d in scratch.shape)
        if n < rows * cols:
            raise b.fail(f"scratch {fmt_shape(scratch.shape)} needs at least {rows * cols} elements")
    valid = index_values(b, "valid_shape")
    if not valid:
        return None
    sizes = [dim_value(v) for v in valid]
    if len(valid) != 2 or None in sizes or not all(0 < v <= n for v, n in zip(sizes, (rows, cols))):
        raise b.bad_value(f"valid_shape must be two constants in (0, {rows}] and (0, {cols}], "
                          f"got {fmt_shape(valid)}")
    return list(valid)


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
    register("tile.mgather", [P("mem", "tensor"), P("idx", "shaped"), P("coalesce", "attr", "row"),
                              P("gather_oob", "attr", "undefined"), P("target_memory", "attr", None),
                              P("scratch", "tensor", None), P("valid_shape", "index_list", None)],
             _mgather, unit="memory", reads=("mem", "idx"),
             doc="Gather from a DDR tensor into a fresh tile: coalesce='row' takes row idx[k] of mem "
                 "(mem's leading dims folded into rows; idx [1, R] or [R, 1]) as row k, coalesce='elem' "
                 "element `mem.reshape(-1)[idx[i, j]]` as element (i, j). Indices are unsigned; "
                 "gather_oob says what one past the end reads: 'undefined' and 'zero' zeros, 'clamp' "
                 "the last, 'wrap' index mod extent. target_memory=MemorySpace.Mat takes idx as a DDR "
                 "tensor and an optional static valid_shape (the element form also a scratch tensor "
                 "of mem's dtype, which the CPU leaves untouched).")
    register("tile.gatherb", [P("src", "tile"), P("offset", "tile"), P("output_dtype", "attr", None)],
             _gatherb, unit="vector",
             doc="Gather 32-byte blocks of src by UINT32 byte offsets: block (r, j) of the result is "
                 "bytes [offset[r, j], offset[r, j] + 32) of src laid out row-major with each row padded "
                 "to 32 bytes, read as output_dtype (default src's dtype); bytes outside src read 0.")


_register_all()
