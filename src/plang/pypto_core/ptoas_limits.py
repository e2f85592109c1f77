"""What the reference refuses under `MemoryPlanner.PTOAS`, refused the same way on plang.

ptoas (the reference's assembler, when it plans memory) guards only the first runtime-indexed
slot of a multi-buffer region (`pl.MemRef(slots=N)[i % N]`) per loop iteration, so a kernel
that keeps two such slots of one region live at once was measured wrong on device, and the
reference's code generator refuses it with `PartialCodegenError`. plang computes the program
correctly under every planner; asked for PTOAS it gives the reference's answer, so a program
that compiles here under PTOAS compiles there too.
"""

from __future__ import annotations

from ..backend.pto_backend import PartialCodegenError
from ..ir.expr import ConstInt, Var
from ..ir.function import Function, Program
from ..ir.stmt import Assign, For, Stmt, flatten
from ..ir.types import TileType
from ..ir.visitor import IRVisitor


class _Reads(IRVisitor):
    visit_types = False

    def __init__(self) -> None:
        self.vars: set[Var] = set()

    def visit_Var(self, var: Var) -> None:
        self.vars.add(var)


class _Loops(IRVisitor):
    visit_types = False

    def __init__(self) -> None:
        self.loops: list[For] = []

    def visit_For(self, loop: For) -> None:
        self.loops.append(loop)
        self.generic_visit(loop)


def _reads(stmts: list[Stmt]) -> set[Var]:
    reads = _Reads()
    for s in stmts:
        reads.visit(s.value if isinstance(s, Assign) else s)
    return reads.vars


def _runtime_slot(s: Stmt):
    """The multi-buffer MemRef `s` binds its tile to with a runtime slot index, if any."""
    memref = s.var.type.memref if isinstance(s, Assign) and isinstance(s.var.type, TileType) else None
    if memref is None or memref.slots < 2 or memref.slot is None or isinstance(memref.slot, ConstInt):
        return None
    return memref


def refuse_colive_slots(program: Program | Function) -> None:
    """PartialCodegenError when a loop body keeps two runtime-indexed slots of one multi-buffer
    region live at once."""
    functions = [program] if isinstance(program, Function) else getattr(program, "functions", {}).values()
    for fn in functions:
        if fn.body is None:
            continue
        loops = _Loops()
        loops.visit(fn.body)
        for loop in loops.loops:
            body = flatten(loop.body)
            held: dict[object, Var] = {}
            for i, s in enumerate(body):
                memref = _runtime_slot(s)
                if memref is None:
                    continue
                earlier = held.get(memref.base)
                if earlier is not None and earlier in _reads(body[i:]):
                    raise PartialCodegenError(
                        f"kernel {fn.name!r}: tiles {earlier.name!r} and {s.var.name!r} keep two slots of "
                        f"the multi-buffer region {memref.base!r} live in one iteration; under "
                        f"MemoryPlanner.PTOAS this is refused (ptoas guards only the first slot of a "
                        f"region per iteration) — compile with MemoryPlanner.PYPTO or DSA_RP")
                held[memref.base] = s.var
