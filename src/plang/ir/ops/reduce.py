"""Row / column reductions and row / column broadcast ops for both families.

A row reduction of `[..., M, N]` gives `[..., M, 1]`; a column reduction of `[M, N]` gives
`[1, N]`. `row_expand_<op>(lhs [M, N], rhs [M, 1])` and `col_expand_<op>(lhs [M, N],
rhs [1, N])` combine every element with its row's / column's value.
"""

from __future__ import annotations

from typing import Sequence

from ...dtypes import INT32, DataType
from ..types import TileType, Type, dim_value
from .common import (
    NUMERIC,
    P,
    const_dim,
    family,
    fmt_shape,
    require_dim,
    require_dtype,
    require_rank,
    require_same_dtype,
    require_same_kind,
    result_like,
    valid_of,
)
from .registry import Bound, Pattern


def _reduced(t, axis: int) -> tuple[list, list | None]:
    """`t` with `axis` collapsed to 1 (valid extent 1 there too)."""
    shape = list(t.shape)
    shape[axis] = const_dim(1)
    valid = None
    if isinstance(t, TileType) and t.valid_shape is not None:
        valid = list(t.valid_shape)
        valid[axis] = const_dim(1)
    return shape, valid


def reduction(direction: str, tmp: str, result_dtype: DataType | None = None):
    """Deduction for a row (last axis) or col (axis -2) reduction.

    tmp: `none` (no scratch), `cover` (tile scratch with every dim >= the input's),
    `exact` (tile scratch of exactly the input's shape).
    """

    def deduce(b: Bound) -> Type:
        t = b.input.type
        require_rank(b, "input", t, min_rank=2)
        if direction == "col" and isinstance(t, TileType):
            require_rank(b, "input", t, 2)
        require_dtype(b, "input", t.dtype, NUMERIC)
        scratch = b.get("tmp_tile")
        if scratch is not None:
            _check_tmp(b, scratch.type, t, tmp)
        shape, valid = _reduced(t, -1 if direction == "row" else -2)
        return result_like(t, result_dtype or t.dtype, shape=shape, valid_shape=valid)

    return deduce


def _check_tmp(b: Bound, s, t, how: str) -> None:
    require_same_dtype(b, "tmp_tile", s, "input", t)
    require_rank(b, "tmp_tile", s, t.rank)
    for axis, (sd, td) in enumerate(zip(s.shape, t.shape)):
        ss, st = dim_value(sd), dim_value(td)
        if ss is None or st is None:
            continue
        if (how == "exact" and ss != st) or ss < st:
            need = "exactly" if how == "exact" else "at least"
            raise b.fail(f"operand 'tmp_tile' shape {fmt_shape(s.shape)} must be {need} the input "
                         f"shape {fmt_shape(t.shape)} (axis {axis})")


def expand(direction: str, allowed: Sequence[DataType] = NUMERIC, packed: bool = False):
    """lhs [.., M, N] combined with rhs [.., M, 1] (row) or [.., 1, N] (col). With `packed`
    (the reference's row_expand_add), rhs may also be a row-major packed row vector
    [.., M, 32 / element bytes]: element j of a row takes rhs[.., i, j % (32 / bytes)]."""

    def deduce(b: Bound) -> Type:
        lhs, rhs = b.lhs.type, b.rhs.type
        require_same_kind(b, "rhs", rhs, "lhs", lhs)
        require_rank(b, "lhs", lhs, min_rank=2)
        require_rank(b, "rhs", rhs, lhs.rank)
        require_dtype(b, "lhs", lhs.dtype, allowed)
        require_same_dtype(b, "rhs", rhs, "lhs", lhs)
        axis = -1 if direction == "row" else -2
        expected = list(lhs.shape)
        block = 32 * 8 // lhs.dtype.bits if packed and lhs.dtype.bits in (8, 16, 32) else 1
        expected[axis] = const_dim(block if dim_value(rhs.shape[axis]) == block else 1)
        for i, (got, want) in enumerate(zip(rhs.shape, expected)):
            require_dim(b, f"operand 'rhs' of shape {fmt_shape(rhs.shape)} must be "
                           f"{fmt_shape(expected)} (one value per {direction}) on axis {i}", got, want)
        return result_like(lhs, valid_shape=valid_of(lhs) if isinstance(lhs, TileType) else None)

    return deduce


def _register_all() -> None:
    X = "X"
    tmp = {"tile": [P("tmp_tile", "tile", None)]}
    for op in ("sum", "max", "min", "prod"):
        family(f"row_{op}", [P("input", X)], reduction("row", "cover"), unit="vector", extra=tmp,
               pattern=Pattern.ROW_REDUCTION, reduction=op,
               doc=f"Row-wise {op} over the last axis: [.., M, N] -> [.., M, 1]. "
                   "The tile form takes an optional scratch tile at least the input's size.")
        family(f"col_{op}", [P("input", X)], reduction("col", "cover"), unit="vector", extra=tmp,
               pattern=Pattern.COL_REDUCTION, reduction=op,
               doc=f"Column-wise {op} over axis -2: [M, N] -> [1, N]. "
                   "The tile form takes an optional scratch tile at least the input's size.")
    for op in ("argmax", "argmin"):
        for direction in ("row", "col"):
            family(f"{direction}_{op}", [P("input", X)], reduction(direction, "exact", INT32),
                   unit="vector", extra=tmp, reduction=op,
                   pattern=Pattern.ROW_REDUCTION if direction == "row" else Pattern.COL_REDUCTION,
                   doc=f"{direction.capitalize()}-wise {op} (INT32 index); the tile form takes an "
                       "optional scratch tile of exactly the input's shape and dtype.")
    ops = {"add": "addition", "sub": "subtraction", "mul": "multiplication", "div": "division",
           "max": "maximum", "min": "minimum", "expdif": "exp(lhs - rhs)"}
    for direction, per in (("row", "[M, 1]"), ("col", "[1, N]")):
        bcast = Pattern.ROW_BROADCAST if direction == "row" else Pattern.COL_BROADCAST
        for op, what in ops.items():
            extra = {"tile": [P("tmp", "tile", None)]} if (direction, op) == ("row", "add") else None
            family(f"{direction}_expand_{op}", [P("lhs", X), P("rhs", X)],
                   expand(direction, packed=(direction, op) == ("row", "add")),
                   unit="vector", extra=extra, pattern=bcast,
                   doc=f"{direction.capitalize()}-wise broadcast {what}: lhs [M, N] with rhs {per}.")
        family(f"{direction}_expand", [P("lhs", X), P("rhs", X)], expand(direction), unit="vector",
               reads=("rhs",), pattern=bcast,
               doc=f"Broadcast rhs {per} to lhs's shape (lhs supplies the shape and is not read).")


_register_all()
