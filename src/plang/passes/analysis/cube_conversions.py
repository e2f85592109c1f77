"""Casts and transposes the cube performs itself, so their operand never visits Vec.

- The FIXPIPE downcast: a `tile.cast` of an FP32 matmul result to BF16 / FP16 with
  `mode="rint"` (the writeback's fixed round-half-to-even) whose every use is a matmul
  operand drains the Acc tile into Mat in the narrow type.
- The transposed view: a `tile.transpose` of a loaded tile (or of one the vector lanes hand
  the cube through `tile.aic_gather`) whose every use is a matmul operand is the operand
  read in the transposed layout from Mat (a matmul's `a_trans` / `b_trans`).
"""

from __future__ import annotations

from ...dtypes import BF16, FP16, FP32
from ...ir.expr import Call, Var
from ...ir.function import Function
from ...ir.ops.common import CAST_MODES, mode_name
from ...ir.ops.registry import Op
from ...ir.stmt import Assign, For, Return, Stmt, While, Yield
from ...ir.types import TileType
from .memory_effects import op_operands
from .var_uses import calls_in, walk_stmts

MAT_SOURCES = ("tile.load", "tile.aic_gather")  # ops whose result may be staged in Mat


def _op_of(s: Stmt) -> Call | None:
    v = s.value if isinstance(s, Assign) else None
    return v if isinstance(v, Call) and isinstance(v.op, Op) else None


def _only_matmul_operands(fn: Function) -> set[Var]:
    """Tile Vars whose every use is the lhs / rhs of a matmul-family op."""
    ok: dict[Var, bool] = {}
    for c in calls_in(fn.body):
        if isinstance(c.op, Op):
            for name, e in op_operands(c):
                if isinstance(e, Var) and isinstance(e.type, TileType):
                    ok[e] = ok.get(e, True) and c.op.facts.unit == "cube" and name in ("lhs", "rhs")
    for s in walk_stmts(fn.body):
        escaping = [*s.values] if isinstance(s, (Yield, Return)) else \
            [a.init for a in s.iter_args] if isinstance(s, (For, While)) else []
        for e in escaping:
            if isinstance(e, Var):
                ok[e] = False
    return {v for v, good in ok.items() if good}


def cube_conversions(fn: Function) -> set[Var]:
    """The result Vars of the casts and transposes of `fn` the cube performs (module doc)."""
    made_by: dict[Var, Call] = {s.var: c for s in walk_stmts(fn.body) if (c := _op_of(s)) is not None}
    operands = _only_matmul_operands(fn)
    out = set()
    for v, c in made_by.items():
        if v not in operands or not isinstance(c.args[0], Var):
            continue
        source = made_by.get(c.args[0])
        if c.op.name == "tile.cast":
            fixpipe = (source is not None and source.op.facts.unit == "cube"
                       and c.args[0].type.dtype is FP32 and v.type.dtype in (BF16, FP16)
                       and mode_name(c.kwargs.get("mode", "round"), CAST_MODES) == "rint")
            if fixpipe:
                out.add(v)
        elif c.op.name == "tile.transpose" and source is not None and source.op.name in MAT_SOURCES:
            out.add(v)
    return out
