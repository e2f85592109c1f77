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
from ..ir.enums import MemorySpace
from ..ir.types import dim_value
from .dispatch import call_op


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


COMPOSED: dict[str, Callable[..., Any]] = {"create_l1": create_l1, "gather_row": gather_row,
                                           "paged_gather": paged_gather}
