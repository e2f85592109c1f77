"""A split AIV lane's share of a tile: of its valid extent, and of a reshape of it."""

from __future__ import annotations

from collections.abc import Sequence

from ...dtypes import INDEX
from ...ir.expr import ConstInt, Expr, Max, Min, Mul, Sub, Var
from ...ir.stmt import Assign, Stmt
from ...ir.types import ScalarType, dim_value


def lane_share(valid: Expr, full: int, lane: Expr, span) -> tuple[list[Stmt], Expr]:
    """Lane `lane`'s part of valid extent `valid` on a split axis `full` long, each lane's
    box being half of it rounded up (lane 1 one short of an odd extent):
    `min(max(valid - lane * half, 0), half)`, bound to a `lane_valid` scalar by the
    statements returned; just `half` where `valid` is the whole of an even extent."""
    half = -(-full // 2)
    if full % 2 == 0 and dim_value(valid) == full:
        return [], ConstInt(half)
    var = Var("lane_valid", ScalarType(INDEX), span)
    clamped = Min(Max(Sub(valid, Mul(lane, ConstInt(half))), ConstInt(0)), ConstInt(half))
    return [Assign(var, clamped, span)], var


def halved_reshape(whole: Sequence[Expr], half: Sequence[Expr], target: Sequence[Expr]) -> list[int] | None:
    """The target shape for a lane's half (shape `half`) of a tile of shape `whole` reshaped
    to `target`, or None where it has none. The half must be a contiguous run of the whole
    tile (only its leading non-unit axis halved: rows, or the columns of one row); the
    target then halves on its own leading non-unit axis, which must be even."""
    old, new, out = ([dim_value(d) for d in s] for s in (whole, half, target))
    if None in old + new + out or old == new:
        return None
    cut = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    lead = next((i for i, d in enumerate(out) if d != 1), None)
    if any(d != 1 for d in old[:cut]) or old[cut] != 2 * new[cut] or lead is None or out[lead] % 2:
        return None
    out[lead] //= 2
    return out
