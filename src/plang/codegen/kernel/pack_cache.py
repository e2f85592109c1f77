"""Matmul B panels packed once per kernel call.

A matmul packs its B tile into contiguous panels before (or while) it computes. In a GEMM
loop nest `for i: for j: for k: C[i, j] += A[i, k] @ B[k, j]` the same B tiles come back on
every row strip `i`, and each would be packed again: 16 times over for the 1024^3 FP32
matmul from 64 x 256 x 256 tiles, about a fifth of its `perf` samples at x86-64-v3. So where B is a DDR load
whose offsets do not follow some enclosing loop (`repeats`), its panels go into a slot of a
per-call buffer (`PanelCache`, one slot per tile position of the tensor, taken at kernel
entry from the runtime's per-thread scratch and given back at its end: a buffer the thread
keeps between calls, so its pages are not faulted in again every call) the first time and
are read from there afterwards.

Only tensors the kernel never writes are cached (`load_only_tensors`): a slot holds B as it
was when packed. A load at an offset off the tile grid, or a failed allocation, packs into
the call's own scratch buffer as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ... import ir as pir
from ...ir.visitor import IRVisitor
from .builder import KernelBuilder
from .mlir import arith, ir, memref, scf

MAX_CACHE_BYTES = 64 << 20
"""The largest per-call panel buffer; a larger B is packed per use."""
_PURE = ("arith.", "index.")


class _TensorUses(IRVisitor):
    visit_types = False

    def __init__(self) -> None:
        self.loaded: set[pir.Var] = set()
        self.other: set[pir.Var] = set()

    def visit_Call(self, call: pir.Call) -> None:
        args = call.args
        if call.op_name == "tile.load" and args and isinstance(args[0], pir.Var):
            self.loaded.add(args[0])
            args = args[1:]
        for a in args:
            self.visit_expr(a)
        self.visit_value(call.kwargs)

    def visit_Var(self, var: pir.Var) -> None:
        self.other.add(var)


def load_only_tensors(function: pir.Function) -> set[pir.Var]:
    """The tensor parameters `function` only ever reads with `tile.load`."""
    uses = _TensorUses()
    uses.visit_stmt(function.body)
    return {p for p in function.params if p in uses.loaded and p not in uses.other}


@dataclass(frozen=True)
class DdrOrigin:
    """Where a deferred load reads: a tile of static shape `tile` at `offsets` of a load-only
    DDR tensor of static dims (`key` identifies the tensor within the kernel)."""

    key: object
    dims: tuple[int, ...]
    tile: tuple[int, ...]
    offsets: tuple[ir.Value, ...]

    def transposed(self) -> DdrOrigin:
        """Where the transpose of this 2D tile reads, as its own (keyed apart) origin."""
        return DdrOrigin(("T", self.key), self.dims[::-1], self.tile[::-1], self.offsets[::-1])

    @property
    def grid(self) -> tuple[int, ...]:
        """Tile positions along each dim."""
        return tuple(-(-d // t) for d, t in zip(self.dims, self.tile))


_UNKNOWN = None


def _loops_behind(v: ir.Value, kb: KernelBuilder, memo: dict) -> list | None:
    """The loops (`scf.for`, counted `scf.while`) whose induction variables `v` is computed
    from (None: unknown: an iteration argument, or an impure op inside a loop)."""
    if v in memo:
        return memo[v]
    memo[v] = _UNKNOWN
    if isinstance(v, ir.BlockArgument):
        owner = v.owner.owner
        if v.owner == kb.entry:
            found = []
        elif v in kb.counted:
            loop, bounds = kb.counted[v]
            found = _merge([_loops_behind(o, kb, memo) for o in bounds] + [[loop]])
        elif owner.name == "scf.for" and v.arg_number == 0:
            found = _merge([_loops_behind(o, kb, memo) for o in _for_bounds(owner)] + [[owner]])
        else:
            found = _UNKNOWN
    else:
        op = v.owner
        if op.name.startswith(_PURE):
            found = _merge([_loops_behind(o, kb, memo) for o in op.operands])
        elif op.operation.block == kb.entry:
            found = []
        else:
            found = _UNKNOWN
    memo[v] = found
    return found


def _for_bounds(op) -> list[ir.Value]:
    return list(op.operands)[:3]


def _merge(parts: list) -> list | None:
    if any(p is _UNKNOWN for p in parts):
        return _UNKNOWN
    out = []
    for p in parts:
        out += [op for op in p if op not in out]
    return out


def _trips(bounds: list[ir.Value]) -> int | None:
    values = []
    for v in bounds:
        op = None if isinstance(v, ir.BlockArgument) else v.owner
        if op is None or op.name != "arith.constant":
            return None
        values.append(ir.IntegerAttr(op.attributes["value"]).value)
    lo, hi, step = values
    return max(0, -(-(hi - lo) // step))


def repeats(kb: KernelBuilder, offsets: tuple[ir.Value, ...]) -> bool:
    """Whether the code at the insertion point runs in a loop (of more than one trip, or of
    a trip count not known) whose induction variable the offsets do not follow: the same
    offsets come back on each of its trips."""
    behind = _merge([_loops_behind(o, kb, {}) for o in offsets])
    if behind is _UNKNOWN:
        return False
    op = ir.InsertionPoint.current.block.owner
    while op is not None and op.name != "func.func":
        if op.name in ("scf.for", "scf.while") and op not in behind:
            bounds = _for_bounds(op) if op.name == "scf.for" else next(
                (b for loop, b in kb.counted.values() if loop == op), None)
            trips = None if bounds is None else _trips(bounds)
            if trips is None or trips > 1:
                return True
        op = op.parent
    return False


class PanelCache:
    """One tensor's packed panels for one tile shape and packing: a slot of `slot_elems`
    elements per tile position in a heap buffer, and a flag per slot (packed this call)."""

    def __init__(self, kb: KernelBuilder, origin: DdrOrigin, elem: ir.Type, slot_elems: int) -> None:
        self.kb, self.tile, self.grid, self.slot_elems = kb, origin.tile, origin.grid, slot_elems
        slots = math.prod(self.grid)
        self.buf = kb.alloc_heap(elem, slots * slot_elems)
        self.flags = kb.alloc_zeroed(ir.IntegerType.get_signless(8), slots)

    @staticmethod
    def fits(origin: DdrOrigin, elem_bytes: int, slot_elems: int) -> bool:
        return math.prod(origin.grid) * slot_elems * elem_bytes <= MAX_CACHE_BYTES

    def slot(self, offsets: tuple[ir.Value, ...]) -> tuple[ir.Value, ir.Value, ir.Value]:
        """(on the grid, slot index, packed already) for a tile at `offsets`; off the grid (or
        without a buffer) the index is 0 and `packed` false."""
        kb = self.kb
        ok = arith.cmpi(arith.CmpIPredicate.ne, memref.extract_aligned_pointer_as_index(self.buf), kb.idx(0))
        index = kb.idx(0)
        for o, t, n in zip(offsets, self.tile, self.grid):
            on = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, arith.remui(o, kb.idx(t)), kb.idx(0)),
                            arith.cmpi(arith.CmpIPredicate.ult, o, kb.idx(n * t)))
            ok = arith.andi(ok, on)
            index = arith.addi(arith.muli(index, kb.idx(n)), arith.divui(o, kb.idx(t)))
        index = arith.select(ok, index, kb.idx(0))
        flag = memref.load(self.flags, [index])
        packed = arith.andi(ok, arith.cmpi(arith.CmpIPredicate.ne, flag, arith.constant(flag.type, 0)))
        return ok, index, packed

    def mark(self, ok: ir.Value, index: ir.Value) -> None:
        """Records the slot as packed (when on the grid)."""
        with ir.InsertionPoint(scf.IfOp(ok).then_block):
            memref.store(arith.constant(ir.IntegerType.get_signless(8), 1), self.flags, [index])
            scf.yield_([])
