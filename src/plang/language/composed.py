"""Reference spellings that are compositions of plang ops (no op of their own):

- `pl.create_l1(shape, dtype, transpose=False)`: the on-chip accumulator of a kernel-driven
  gather, a new tensor (`tensor.create`); in a kernel it is a tile, placed in Mat by the
  matmul that reads it. `transpose` picks Ascend's ZN layout for a `b_trans` operand and
  changes no value, so it is accepted and not needed here.
- `pl.gather_row(acc, src, dst_offset, src_offset, shapes, transpose=False, valid_shape=None)`:
  `acc` with the window `shapes` (its `valid_shape` part) of `src` at `src_offset` written at
  `dst_offset`, transposed first with `transpose`: a `slice` then an `assemble`.
- `pl.paged_gather(src, indices, block_table, block_size, size, max_indices, space=, col_off=,
  is_trans=, is_b_matrix=)`: rows `block_table[i // block_size] * block_size + i % block_size`
  of `src` (columns `[col_off, col_off + size)`) for each logical index `i`, as `[max_indices,
  size]` (transposed with `is_trans`): the row numbers are computed by tensor ops and the rows
  gathered along axis 0 of the source window. `space` / `is_b_matrix` are placement hints:
  plang places the value by its uses.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..dtypes import INT32
from ..errors import ParserTypeError
from ..ir.enums import MemorySpace, PadValue
from ..ir.types import describe_value, dim_value
from .dispatch import call_op, namespace_of


def create_l1(shape: Sequence[Any], dtype: Any, transpose: bool = False) -> Any:
    if not isinstance(transpose, bool):
        raise ParserTypeError(f"pl.create_l1: transpose must be True or False, got {transpose!r}")
    return call_op("tensor.create", [shape], {"dtype": dtype})


def gather_row(acc: Any, src: Any, dst_offset: Sequence[Any], src_offset: Sequence[Any],
               shapes: Sequence[Any], transpose: bool = False, *,
               valid_shape: Sequence[Any] | None = None) -> Any:
    if transpose and valid_shape is not None:
        raise ParserTypeError("pl.gather_row: valid_shape= is not supported together with transpose=True")
    kw = {"valid_shape": valid_shape} if valid_shape is not None else {}
    window = call_op("tensor.slice", [src, shapes, src_offset], kw)
    if transpose:
        window = call_op("tensor.transpose", [window], {"axis1": -2, "axis2": -1})
    return call_op("tensor.assemble", [acc, window, dst_offset], {})


def paged_gather(src: Any, indices: Any, block_table: Any, block_size: int, size: int, max_indices: int, *,
                 space: MemorySpace = MemorySpace.Mat, col_off: int = 0, is_trans: bool = False,
                 is_b_matrix: bool = False) -> Any:
    if space not in (MemorySpace.Mat, MemorySpace.Vec):
        raise ParserTypeError(f"pl.paged_gather: space must be pl.MemorySpace.Mat or Vec, got {space!r}")
    count = math.prod(dim_value(d) or 0 for d in indices.type.shape)
    if not 0 < count <= max_indices:
        raise ParserTypeError(f"pl.paged_gather: indices {list(indices.type.shape)} must hold 1 to "
                              f"max_indices ({max_indices}) static entries")
    logical = call_op("tensor.reshape", [indices, [1, count]], {})
    block = call_op("tensor.divs", [logical, block_size], {})
    page = call_op("tensor.gather", [block_table, block], {})
    offset = call_op("tensor.sub", [logical, call_op("tensor.muls", [block, block_size], {})], {})
    row = call_op("tensor.add", [call_op("tensor.muls", [page, block_size], {}), offset], {})
    zeros = call_op("tensor.full", [[count, size]], {"dtype": INT32, "value": 0})
    rows = call_op("tensor.row_expand", [zeros, call_op("tensor.reshape", [row, [count, 1]], {})], {})
    window = call_op("tensor.slice", [src, [src.type.shape[0], size], [0, col_off]], {})
    out = call_op("tensor.gather", [window, rows], {"dim": 0})
    if count < max_indices:
        room = call_op("tensor.create", [[max_indices, size]], {"dtype": src.type.dtype})
        out = call_op("tensor.assemble", [room, out, [0, 0]], {})
    return call_op("tensor.transpose", [out], {"axis1": 0, "axis2": 1}) if is_trans else out


_PART_PADS = {"maximum": PadValue.min, "minimum": PadValue.max}


def _part(op: str) -> Callable[..., Any]:
    """`pl.part_<op>(src0, src1)`: `op` over src0's valid region, where src1 is valid there,
    else src0's element; the result has src0's shape and valid region. On tiles, src1's cells
    outside its valid region are first filled with `op`'s identity, so one plain elementwise op
    computes it, bit for bit (signed zeros too): max / min fill -inf / +inf; add subtracts
    -src1 filled with +0 (x - 0 is x, where x + 0 turns -0 into +0); mul multiplies by src1
    inside and 1 outside, from a mask of src1's valid region. A fully valid src1 needs no
    fill. DDR tensors are fully valid: the plain op."""
    name = f"part_{op.replace('imum', '')}"

    def part(src0: Any, src1: Any, *, namespace: str | None = None) -> Any:
        kinds = {namespace_of(src0), namespace_of(src1)}
        if len(kinds) != 1 or None in kinds or (namespace is not None and kinds != {namespace}):
            want = f"two {namespace}s" if namespace else "two tiles or two tensors"
            raise ParserTypeError(f"pl.{namespace + '.' if namespace else ''}{name} takes {want}, got "
                                  f"{describe_value(src0)} and {describe_value(src1)}")
        kind = kinds.pop()
        valid = getattr(src1.type, "valid_shape", None)
        if kind == "tensor" or valid is None:
            return call_op(f"{kind}.{op}", [src0, src1], {})
        if op in _PART_PADS:
            filled = call_op("tile.fillpad", [src1], {"pad_value": _PART_PADS[op]})
            return call_op(f"tile.{op}", [src0, filled], {})
        if op == "add":
            negated = call_op("tile.fillpad", [call_op("tile.neg", [src1], {})], {})
            return call_op("tile.sub", [src0, negated], {})
        t = src1.type  # mul: src1 - 0 inside its valid region, 0 - (-1) outside
        inside = call_op("tile.fillpad", [call_op("tile.full", [t.shape], {"dtype": t.dtype, "value": 1,
                                                                          "valid_shape": valid})], {})
        minus_outside = call_op("tile.adds", [inside, -1], {})
        factor = call_op("tile.sub", [call_op("tile.fillpad", [src1], {}), minus_outside], {})
        return call_op("tile.mul", [src0, factor], {})

    part.__name__ = part.__qualname__ = name
    return part


PARTS = {f.__name__: f for f in map(_part, ("add", "mul", "maximum", "minimum"))}
"""`pl.part_add`, `pl.part_mul`, `pl.part_max`, `pl.part_min` (also `pl.tile.` / `pl.tensor.`)."""

COMPOSED: dict[str, Callable[..., Any]] = {"create_l1": create_l1, "gather_row": gather_row,
                                           "paged_gather": paged_gather, **PARTS}
