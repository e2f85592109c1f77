"""Which core of a core group runs a statement: the cube (AIC), the vector lanes (AIV), or both.

Matmul-family ops run on the cube and vector-unit ops on the vector lanes. Memory ops
follow the buffer they touch: a load into Mat / Left / Right, a store or move out of Acc /
Mat, and an allocation in Acc / Mat / Left / Right belong to the cube; those in Vec to
the vector lanes; a `tile.assemble` runs where its target lives (into Mat: the cube's
Acc->Mat insert), a `tile.slice` where its input lives, and a `tile.cast` / `tile.transpose`
into a cube buffer is the cube's own (see `cube_conversions.py`). Pipe ops belong to the
side that issues them. Scalar arithmetic, chip queries and synchronisation run on both sides.
"""

from __future__ import annotations

from enum import Enum

from ...ir.enums import MemorySpace
from ...ir.expr import Call, Expr
from ...ir.ops.registry import Op
from ...ir.ops.system_ops import syncall_form
from ...ir.stmt import Assign, Eval, Stmt
from ...ir.types import TileType


class Side(Enum):
    CUBE = "AIC"
    VECTOR = "AIV"
    BOTH = "both"


CUBE_SPACES = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias)
CUBE_PIPE_OPS = ("tile.tpush_to_aiv", "tile.tpop_from_aiv", "tile.tfree_to_aiv")
VECTOR_PIPE_OPS = ("tile.tpush_to_aic", "tile.tpop_from_aic", "tile.tfree_to_aic",
                   "tile.aiv_shard", "tile.aic_gather", "tensor.aiv_shard", "tensor.aic_gather")


def _space(e: Expr) -> MemorySpace | None:
    t = e.type
    return t.memory_space if isinstance(t, TileType) else None


def _by_space(space: MemorySpace | None) -> Side:
    return Side.CUBE if space in CUBE_SPACES else Side.VECTOR


def call_side(call: Call) -> Side:
    op = call.op
    if not isinstance(op, Op):
        return Side.BOTH
    name, unit = op.name, op.facts.unit
    if name in CUBE_PIPE_OPS:
        return Side.CUBE
    if name in ("system.sync_set", "system.sync_wait") and call.kwargs.get("core_type"):
        return Side.CUBE if call.kwargs["core_type"] == "aic" else Side.VECTOR
    if name in VECTOR_PIPE_OPS:
        return Side.VECTOR
    if unit == "cube":
        return Side.CUBE
    if name in ("tile.assemble", "tile.slice"):
        return _by_space(_space(call.args[0]))
    if unit == "vector":
        return Side.VECTOR
    if name == "tile.move":
        return _by_space(call.kwargs.get("target_memory"))
    if name == "tile.store" or name in ("tile.read", "tile.write"):
        return _by_space(_space(call.args[0]))
    if isinstance(call.type, TileType):  # loads and allocations
        return _by_space(call.type.memory_space)
    return Side.BOTH


def runs_on(call: Call, side: Side) -> bool:
    """Whether a call that both sides keep (`call_side` BOTH) takes place on `side`: a
    `system.syncall` only on the cores its core_type names."""
    if isinstance(call.op, Op) and call.op.name == "system.syncall":
        core_type = syncall_form(call.kwargs)[1]
        return core_type == "mix" or (core_type == "aic_only") == (side is Side.CUBE)
    return True


def is_cube_compute(call: Call) -> bool:
    return isinstance(call.op, Op) and call.op.facts.unit == "cube"


def is_vector_compute(call: Call) -> bool:
    return isinstance(call.op, Op) and call.op.facts.unit == "vector"


def leaf_call(s: Stmt) -> Call | None:
    """The call a leaf statement evaluates (None for other statements)."""
    if isinstance(s, Assign) and isinstance(s.value, Call):
        return s.value
    if isinstance(s, Eval) and isinstance(s.expr, Call):
        return s.expr
    return None


def stmt_side(s: Stmt) -> Side:
    """The side of a leaf statement (BOTH for scalar work and non-call statements)."""
    call = leaf_call(s)
    if call is None:
        return Side.BOTH
    if isinstance(call.op, Op) and call.op.name in ("tile.cast", "tile.transpose") \
            and _space(s.var) in CUBE_SPACES:
        return Side.CUBE
    return call_side(call)


SPLIT_CODE = {"NONE": 0, "UP_DOWN": 1, "LEFT_RIGHT": 2}
