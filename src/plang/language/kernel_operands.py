"""A tile op in a kernel that meets a tensor operand: the tensor's value, loaded whole.

Inside an InCore function plang makes an operand-less creator (`pl.full`, `pl.arange`) a tile,
where the reference keeps every value tensor-level until ConvertTensorToTileOps. A reference kernel
such as `acc = pl.full(..); acc = pl.add(acc, pl.matmul(a_chunk, w_chunk))` then meets a tile and
a tensor in one op; plang reads the tensor operand as its whole tile (`tile.load` at offset zero,
which the pass turns into the tile itself when the tensor is a kernel intermediate).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..ir.expr import ConstInt
from ..ir.ops import REGISTRY, make_call
from ..ir.types import TensorType, TileType
from .values import DSLValue, wrap


def _kind(v: Any) -> type | None:
    t = v.unwrap().type if isinstance(v, DSLValue) else None
    return type(t) if isinstance(t, (TensorType, TileType)) else None


def _whole_tile(v: Any, span) -> Any:
    if _kind(v) is not TensorType:
        return v
    t: TensorType = v.unwrap().type
    return wrap(make_call("tile.load", [v.unwrap(), [ConstInt(0) for _ in t.shape], list(t.shape)],
                          span=span))


def kernel_tile_operands(name: str, args: Sequence[Any], kwargs: dict[str, Any],
                         state: Any) -> tuple[str, list, dict] | None:
    """For op `name` (tile or tensor form) in an InCore function given both tiles and tensors:
    its tile form and the operands with every tensor replaced by the load of its whole tile;
    None when that does not apply."""
    tile_name = "tile." + name.split(".", 1)[1]
    kinds = {_kind(v) for v in (*args, *kwargs.values())}
    if not (tile_name in REGISTRY and state is not None and state.in_core_function
            and {TensorType, TileType} <= kinds):
        return None
    return (tile_name, [_whole_tile(a, state.span) for a in args],
            {k: _whole_tile(v, state.span) for k, v in kwargs.items()})
