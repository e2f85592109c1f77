"""Sorting into (value, index) pairs, for both families.

`sort32(src, idx)` sorts each run of 32 elements of every row descending and writes
`[value, index bits, value, index bits, ...]` (the UINT32 index of each element, stored as the
bits of an FP32 slot), so the result has twice src's columns. `mrgsort` merges sorted runs of
such pairs: with `block_len=L` (format 1) every 4 adjacent runs of L columns of one value
merge into one run of 4L columns; with 2 to 4 values (format 2) the values' rows merge into
one row of their total width (the tile form's `tmp=` workspace of the reference is accepted and
not needed). Ties keep the earlier element (the earlier run or value), and values order as
their FP32 bits do (NaN above +inf). Extract the two halves with
`gather(x, mask_pattern=P0101)` (values) and `gather(x, mask_pattern=P1010,
output_dtype=pl.UINT32)` (indices).
"""

from __future__ import annotations

from ...dtypes import FP32, INT32, UINT32
from ..expr import Add, ConstInt
from ..types import ScalarType, Type, dim_value
from .common import P, const_dim, fmt_shape, fmt_type, require_dtype, require_same_shape, result_like
from .registry import Bound, register

RUN = 32
"""Elements per run sorted by sort32."""


def _pairs(b: Bound, name: str) -> None:
    t = b[name].type
    require_dtype(b, name, t.dtype, (FP32,))
    if dim_value(t.shape[-1]) is not None and dim_value(t.shape[-1]) % 2:
        raise b.fail(f"operand {name!r} {fmt_shape(t.shape)} must hold (value, index) pairs: an even "
                     "column count")


def _sort32(b: Bound) -> Type:
    src, idx = b.src.type, b.idx.type
    require_dtype(b, "src", src.dtype, (FP32,))
    require_dtype(b, "idx", idx.dtype, (UINT32, INT32))
    require_same_shape(b, "idx", idx, "src", src)
    cols = dim_value(src.shape[-1])
    if cols is None or cols % RUN:
        raise b.fail(f"operand 'src' {fmt_shape(src.shape)} needs a static column count that is a "
                     f"multiple of {RUN}")
    return result_like(src, shape=[*src.shape[:-1], const_dim(2 * cols)], valid_shape=None)


def _mrgsort(b: Bound) -> Type:
    srcs = [b[n] for n in ("src0", "src1", "src2", "src3") if b[n] is not None]
    for i in range(len(srcs)):
        _pairs(b, f"src{i}")
    if b.block_len is not None:
        if len(srcs) > 1 or b.get("tmp") is not None:
            raise b.fail("block_len= (format 1: one value of sorted runs) takes no src1..src3 / tmp "
                         "(format 2: merging 2 to 4 values)")
        bl = b.block_len
        if not isinstance(bl.type, ScalarType) or not bl.type.dtype.is_int:
            raise b.fail(f"block_len must be an integer scalar, got {fmt_type(bl.type)}")
        if isinstance(bl, ConstInt) and (bl.value <= 0 or bl.value % 64):
            raise b.bad_value(f"block_len must be a positive multiple of 64 columns, got {bl.value}")
        return result_like(b.src0.type, shape=list(b.src0.type.shape), valid_shape=None)
    if b.exhausted:
        raise b.bad_value("exhausted=True (stop at the first exhausted value) is not supported by the CPU "
                          "backend; merge every element")
    if len(srcs) < 2 or any(b[f"src{i}"] is None for i in range(len(srcs))):
        raise b.fail("mrgsort needs block_len= (format 1) or 2 to 4 values src0, src1[, src2[, src3]] "
                     "(format 2)")
    first = srcs[0].type
    cols = first.shape[-1]
    for i, s in enumerate(srcs[1:], 1):
        t = s.type
        if type(t) is not type(first) or t.dtype is not first.dtype or t.rank != first.rank:
            raise b.fail(f"src{i} {fmt_type(t)} must be a {fmt_type(first)}-like value of the same kind, "
                         "dtype and rank as src0")
        if any(dim_value(x) != dim_value(y) for x, y in zip(t.shape[:-1], first.shape[:-1])):
            raise b.fail(f"src{i} {fmt_shape(t.shape)} and src0 {fmt_shape(first.shape)} must agree on "
                         "every axis but the last")
        static = (dim_value(cols), dim_value(t.shape[-1]))
        cols = Add(cols, t.shape[-1]) if None in static else const_dim(sum(static))
    return result_like(first, shape=[*first.shape[:-1], cols], valid_shape=None)


def _register_all() -> None:
    for ns in ("tensor", "tile"):
        register(f"{ns}.sort32", [P("src", ns), P("idx", ns)], _sort32, unit="vector",
                 doc="Sort each run of 32 elements of every row descending into (value, index bits) pairs: "
                     "`[v0, i0, v1, i1, ...]` with the UINT32 idx of each element in the FP32 slot after "
                     "it; twice src's columns.")
        srcs = [P("src0", ns)] + [P(f"src{i}", ns, None) for i in (1, 2, 3)]
        scratch = [P("tmp", "tile", None)] if ns == "tile" else []  # the reference's workspace: unused
        params = [*srcs, *scratch, P("exhausted", "attr", False), P("block_len", "scalar", None)]
        register(f"{ns}.mrgsort", params, _mrgsort, unit="vector",
                 doc="Merge sorted runs of sort32 pairs (descending; ties keep the earlier element): with "
                     "block_len=L every 4 adjacent runs of L columns merge into one of 4L; with 2 to 4 "
                     "values, their rows merge into one row of their total width.")


_register_all()
