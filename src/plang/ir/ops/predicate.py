"""Packed predicate masks, the reference's `tile.cmp` / `tile.cmps` result: element (r, c) is
bit `c % 8` of byte `c // 8` of row r, in a UINT8 tile of `roundup(ceil(N / 8), 32)` columns
(the A2/A3 column alignment) whose valid region is `ceil(valid columns / 8)` bytes; padding
bytes are 0. `tile.sel` / `tile.sels` take such a mask or one shaped like their values
(nonzero = true). `tensor.cmp` stays an elementwise BOOL compare; in a kernel it becomes
`tile.cmp` then `tile.sel` of BOOL ones and zeros. A mask loaded from memory may carry the
same bits in wider integers (`CARRIERS`)."""

from __future__ import annotations

from ...dtypes import BOOL, INT8, INT16, INT32, UINT8, UINT16, UINT32
from ..types import TileType, Type, dim_value, shapes_equal
from .common import const_dim, fmt_shape, fmt_type
from .registry import Bound

BITS = 8
COL_ALIGN = 32
CARRIERS = (UINT8, INT8, UINT16, INT16, UINT32, INT32)
"""The integer dtypes a packed predicate may come in (`tile.cmp` makes UINT8)."""


def packed_cols(cols: int) -> int:
    """Mask bytes per row for `cols` elements."""
    return -(-(-(-cols // BITS)) // COL_ALIGN) * COL_ALIGN


def packed(b: Bound, t: TileType) -> Type:
    """The packed mask type of a compare whose elementwise result is `t`."""
    cols = dim_value(t.shape[-1])
    if cols is None:
        raise b.fail(f"a packed predicate mask needs a static column count, got {fmt_shape(t.shape)}")
    valid = list(t.effective_valid_shape)
    vc = dim_value(valid[-1])
    valid[-1] = const_dim(-(-vc // BITS)) if vc is not None else const_dim(packed_cols(cols))
    return TileType([*t.shape[:-1], const_dim(packed_cols(cols))], UINT8, None,
                    valid if t.valid_shape is not None else None)


def is_packed(mask: Type, values: Type) -> bool:
    """Whether a select's mask is a packed predicate: every integer mask tile is, as the
    reference's TSEL / TSELS read it; a BOOL tile shaped like the values (and a tensor mask)
    selects element by element."""
    return isinstance(mask, TileType) and not (mask.dtype is BOOL and shapes_equal(mask.shape, values.shape))


def check_packed(b: Bound, mask: TileType, values: TileType, values_name: str) -> None:
    """A mask not shaped like `values` must be their packed predicate: the same rows, at
    least ceil(columns / 8) bytes a row, carried by 8-, 16- or 32-bit integers (the bytes
    read little-endian: bit k of a row is bit k % w of its element k // w, w the width)."""
    cols, width = dim_value(values.shape[-1]), dim_value(mask.shape[-1])
    rows_match = mask.rank == values.rank and all(
        dim_value(m) == dim_value(v) for m, v in zip(mask.shape[:-1], values.shape[:-1]))
    if (mask.dtype not in CARRIERS or not rows_match or cols is None or width is None
            or width * mask.dtype.bits < cols):
        raise b.fail(f"mask {fmt_type(mask)} must be shaped like {values_name!r} {fmt_type(values)} or be "
                     f"its packed predicate (same rows, at least ceil({cols} / 8) bytes a row of 8-, 16- "
                     f"or 32-bit integers)")
