"""Mask-pattern column selection: `gather_mask` (compact the columns a fixed pattern selects)
and `scatter_mask` (its inverse: write compact columns into the selected columns of a wider
destination), for both families.

A pattern picks every `stride`-th column starting at `phase` (`MaskPattern`); P1111 picks
every column. These are the mask forms of `pl.gather(x, mask_pattern=...)` and
`pl.scatter(x, mask_pattern=..., dst=d)`.
"""

from __future__ import annotations

from ...dtypes import DataType
from ..expr import Add, FloorDiv
from ..types import TileType, Type, dim_value
from .common import (
    P,
    const_dim,
    fmt_shape,
    require_dtype,
    require_int_attr,
    require_rank,
    require_same_dtype,
    result_like,
)
from .indexing import GATHER_DTYPES, SCATTER_DTYPES
from .registry import Bound, register


class MaskPattern:
    """`pl.tile.MaskPattern`: the column patterns of the mask forms, as their integer codes.
    Read right to left: P0101 selects columns 0, 2, 4, ...; P1000 selects 3, 7, 11, ..."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


def stride_phase(pattern: int) -> tuple[int, int]:
    """(stride, first column) of a mask pattern code 1..7."""
    if pattern == MaskPattern.P1111:
        return 1, 0
    if pattern <= MaskPattern.P1010:
        return 2, pattern - MaskPattern.P0101
    return 4, pattern - MaskPattern.P0001


def _pattern(b: Bound) -> tuple[int, int]:
    return stride_phase(require_int_attr(b, "mask_pattern", MaskPattern.P0101, MaskPattern.P1111))


def _gather_mask(b: Bound) -> Type:
    name = b.op.params[0].name
    src = b[name].type
    require_dtype(b, name, src.dtype, GATHER_DTYPES)
    require_rank(b, name, src, 2)
    stride, _ = _pattern(b)
    out_dtype = b.output_dtype or src.dtype
    if not isinstance(out_dtype, DataType) or out_dtype.bits != src.dtype.bits:
        raise b.fail(f"output_dtype must be a dtype of {src.dtype.name}'s width ({src.dtype.bits} bits), "
                     f"got {getattr(out_dtype, 'name', out_dtype)!r}")
    rows, cols = src.shape
    n = dim_value(cols)
    if n is None:
        raise b.fail(f"operand {name!r} needs a static column count, got {fmt_shape(src.shape)}")
    if n % stride:
        raise b.bad_value(f"mask_pattern={b.mask_pattern} selects one column in {stride}, so operand "
                          f"{name!r} needs a column count divisible by {stride}, got {n}")
    valid = None
    if isinstance(src, TileType) and src.valid_shape is not None:
        vr, vc = src.valid_shape
        c = dim_value(vc)
        valid = [vr, const_dim(-(-c // stride)) if c is not None
                 else FloorDiv(Add(vc, const_dim(stride - 1)), const_dim(stride))]
    return result_like(src, out_dtype, [rows, const_dim(n // stride)], valid)


def _scatter_mask(b: Bound) -> Type:
    data_name = "input" if "input" in b else "src"
    data, dst = b[data_name].type, b.dst.type
    for name, t in ((data_name, data), ("dst", dst)):
        require_dtype(b, name, t.dtype, SCATTER_DTYPES)
        require_rank(b, name, t, 2)
    if type(data) is not type(dst):
        raise b.fail(f"operands {data_name!r} and 'dst' must both be tiles or both tensors")
    require_same_dtype(b, data_name, data, "dst", dst)
    stride, _ = _pattern(b)
    r, c = (dim_value(x) for x in data.shape)
    dr, dc = (dim_value(x) for x in dst.shape)
    if None in (r, c, dr, dc):
        raise b.fail(f"operands {data_name!r} {fmt_shape(data.shape)} and 'dst' {fmt_shape(dst.shape)} "
                     "need static shapes")
    if r != dr or dc != c * stride:
        raise b.fail(f"mask_pattern={b.mask_pattern} writes one column in {stride}: dst must be "
                     f"[{r}, {c * stride}] for {data_name} {fmt_shape(data.shape)}, "
                     f"got {fmt_shape(dst.shape)}")
    return result_like(dst)


def _register_all() -> None:
    pattern = P("mask_pattern", "attr")
    for ns, first in (("tensor", "input"), ("tile", "src")):
        register(f"{ns}.gather_mask", [P(first, ns), pattern, P("output_dtype", "attr", None)], _gather_mask,
                 unit="vector", unified=False,
                 doc="Compact each row of a 2D value to the columns mask_pattern selects "
                     "(`x[:, phase::stride]`: P0101 / P1010 halve the columns, P0001..P1000 quarter "
                     "them, P1111 keeps all); "
                     "output_dtype (same bit width) reinterprets the selected bits.")
    scatter_doc = ("A copy of dst with the columns mask_pattern selects replaced by the compact columns of "
                   "{data} (`dst[:, phase::stride] = {data}`), the inverse of gather_mask; dst has "
                   "stride times {data}'s columns.")
    register("tensor.scatter_mask", [P("input", "tensor"), P("dst", "tensor"), pattern], _scatter_mask,
             unit="vector", unified=False, doc=scatter_doc.format(data="input"))
    register("tile.scatter_mask", [P("dst", "tile"), P("src", "tile"), pattern], _scatter_mask,
             unit="vector", unified=False, doc=scatter_doc.format(data="src"))


_register_all()

__all__ = ["MaskPattern", "stride_phase"]
