"""Fences for DDR handoffs between the two sides of a mixed kernel.

A DDR tensor stored by one side's work (`tile.store`) and loaded by the other's (`tile.load`)
crosses through DDR, not a pipe, and the AIC and AIV kernels run concurrently: the load must
wait for the store. The writer pushes a fence token (a small tile of its own) on a pipe of
its own right after the store (after the innermost statement holding all its stores of the
tensor, e.g. a branch storing it in each arm, or a loop); the reader pops (and frees) it
right before the statement of that block that holds its first load of the tensor, so both
run equally often and the load is ordered after the stores. That needs every load of it on
the reader's side inside statements that follow the stores in their block; any other
handoff is a located error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...dtypes import FP32
from ...ir.enums import MemorySpace
from ...ir.expr import ConstFloat, ConstInt, Var
from ...ir.function import Function
from ...ir.ops import make_call
from ...ir.stmt import Assign, Stmt, flatten
from ..diagnostics import PassError
from .core_affinity import Side, leaf_call, stmt_side
from .var_uses import child_stmts, walk_stmts

TOKEN_SHAPE = (1, 16)


@dataclass
class Fence:
    """One handoff: `source` makes `token` (a small FP32 tile), which `writer` pushes."""

    token: Var
    writer: Side
    source: Assign


def _fence(name: str, writer: Side, span) -> Fence:
    space = MemorySpace.Acc if writer is Side.CUBE else MemorySpace.Vec
    call = make_call("tile.full", [[ConstInt(d) for d in TOKEN_SHAPE], FP32, ConstFloat(0.0)],
                     {"target_memory": space}, span)
    token = Var(f"{name}_fence", call.type, span)
    return Fence(token, writer, Assign(token, call, span))


@dataclass
class Fences:
    after: dict[int, Fence] = field(default_factory=dict)  # id(store stmt) -> its fence
    before: dict[int, list[Fence]] = field(default_factory=dict)  # id(stmt) -> fences to pop first

    def all(self) -> list[Fence]:
        return list(self.after.values())


def _transfers(fn: Function, aliases: dict[Var, Var]) -> tuple[dict, dict]:
    """(stores, loads) by DDR root: lists of (side, statement) of the side-specific ones."""
    stores: dict[Var, list[tuple[Side, Stmt]]] = {}
    loads: dict[Var, list[tuple[Side, Stmt]]] = {}
    for s in walk_stmts(fn.body):
        call = leaf_call(s)
        if call is None or call.op.name not in ("tile.store", "tile.load"):
            continue
        side = stmt_side(s)
        operand = call.args[2] if call.op.name == "tile.store" else call.args[0]
        if not isinstance(operand, Var) or side is Side.BOTH:
            continue
        table = stores if call.op.name == "tile.store" else loads
        table.setdefault(aliases.get(operand, operand), []).append((side, s))
    return stores, loads


def _holds(s: Stmt, targets: list[Stmt]) -> bool:
    """Some statement of `targets` is `s` or inside it."""
    inside = {id(x) for x in walk_stmts(s)}
    return any(id(t) in inside for t in targets)


def _holding_block(body: Stmt, targets: list[Stmt]) -> list[Stmt]:
    """The innermost statement list (a flattened body) holding every statement of `targets`."""
    for s in flatten(body):
        for child in child_stmts(s):
            inside = {id(x) for x in walk_stmts(child)}
            if all(id(t) in inside for t in targets):
                return _holding_block(child, targets)
    return flatten(body)


def _error(fn: Function, root: Var, store: Stmt, load: Stmt, writer: Side, why: str) -> PassError:
    line = store.span.begin_line if store.span else "?"
    return PassError(f"{fn.name!r}: tensor {root.name!r} is stored by {writer.value} work (line {line}) "
                     f"and loaded by {OTHER[writer].value} work of the same kernel, {why}; the AIC and "
                     "AIV kernels run concurrently, so the load could read it before the store lands: "
                     "split the scope in two (the store in one pl.at, the load in the next) or pass "
                     "the tile itself", load.span)


OTHER = {Side.CUBE: Side.VECTOR, Side.VECTOR: Side.CUBE}


def ddr_fences(fn: Function, aliases: dict[Var, Var]) -> Fences:
    """The fence of every cross-side DDR handoff in mixed kernel `fn` (see the module doc)."""
    stores, loads = _transfers(fn, aliases)
    fences = Fences()
    for root, readers in loads.items():
        writers = stores.get(root, [])
        crossing = [(side, s) for side, s in readers if any(w is not side for w, _ in writers)]
        if not crossing:
            continue
        reader, first_load = crossing[0]
        writer = next(w for w, _ in writers if w is not reader)
        written = [s for w, s in writers if w is writer]
        block = _holding_block(fn.body, written + [load for _, load in crossing])
        at = max(i for i, s in enumerate(block) if _holds(s, written))
        store = block[at]  # the last statement of the block holding a store
        holders = []
        for _, load in crossing:
            holder = next((i for i, s in enumerate(block[at + 1:], at + 1) if _holds(s, [load])), None)
            if holder is None:
                raise _error(fn, root, written[-1], load, writer, "outside the statements that follow "
                             "the store in its block")
            holders.append(holder)
        fence = _fence(root.name, writer, store.span)
        fences.after[id(store)] = fence
        fences.before.setdefault(id(block[min(holders)]), []).append(fence)
    return fences
