"""The compare form of gather, for both families: each row of a 2D input scanned against a
scalar threshold. `gather_compare` holds the column indices (plus `offset`) of the first
`out_cols` matching elements of each row, in order, 0 after the last match;
`gather_count` holds the number of indices written per row (at most `out_cols`), as a
[1, rows] row. `pl.gather(x, kvalue=k, cmp_mode=m, out_cols=n)` returns both."""

from __future__ import annotations

from ...dtypes import INT32, UINT32
from ..types import Type
from .common import (
    CMP_TYPES,
    P,
    const_dim,
    mode_name,
    require_dtype,
    require_int_attr,
    require_rank,
    require_scalar_matches,
    result_like,
)
from .indexing import GATHER_DTYPES
from .registry import Bound, register


def _checked(b: Bound) -> int:
    src = b.input.type
    require_dtype(b, "input", src.dtype, GATHER_DTYPES)
    require_rank(b, "input", src, 2)
    require_scalar_matches(b, "kvalue", b.kvalue, src.dtype)
    if mode_name(b.cmp_mode, CMP_TYPES) is None:
        raise b.bad_value(f"cmp_mode must be one of {', '.join(CMP_TYPES)} or its code 0..5, "
                          f"got {b.cmp_mode!r}")
    require_int_attr(b, "offset")
    return require_int_attr(b, "out_cols", 1)


def _indices(b: Bound) -> Type:
    cols = _checked(b)
    return result_like(b.input.type, INT32, [b.input.type.shape[0], const_dim(cols)], None)


def _count(b: Bound) -> Type:
    _checked(b)
    dtype = b.count_dtype or INT32
    if dtype not in (INT32, UINT32):
        raise b.fail(f"count_dtype must be INT32 or UINT32, got {getattr(dtype, 'name', dtype)!r}")
    return result_like(b.input.type, dtype, [const_dim(1), b.input.type.shape[0]], None)


def _register_all() -> None:
    for ns in ("tensor", "tile"):
        params = [P("input", ns), P("kvalue", "scalar"), P("cmp_mode", "attr"), P("out_cols", "attr"),
                  P("offset", "attr", 0)]
        register(f"{ns}.gather_compare", params, _indices, unit="vector", unified=False,
                 doc="Per row of a 2D input, the column indices (+ offset) of the first out_cols elements "
                     "`input[r, j] <cmp_mode> kvalue`, in order, 0 after the last match ([rows, out_cols] "
                     "INT32).")
        register(f"{ns}.gather_count", [*params, P("count_dtype", "attr", None)], _count, unit="vector",
                 unified=False,
                 doc="Per row of a 2D input, how many indices gather_compare writes: the number of elements "
                     "`input[r, j] <cmp_mode> kvalue`, at most out_cols ([1, rows], count_dtype INT32 or "
                     "UINT32).")


_register_all()
