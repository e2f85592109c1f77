"""The `split_aiv` placement rules (the AivSplitValid property), shared by the verifier and
OutlineIncoreScopes, which diagnoses them as it outlines.

Opening even one region makes the regions authoritative for the whole function:

- vector compute inside a region runs on the AIV lane; outside every region it is
  rejected (in core functions; in a host function the region is outlined on its own),
  except a `tensor.assemble` of a cube result, which the cube stores, and the views of a
  DDR tensor (`tensor.slice` / `reshape` / `view`), which compute nothing;
- cube compute (matmul family) inside a region is rejected;
- `aiv_shard` / `aic_gather` outside every region are rejected;
- a cube-produced tile read inside a region must arrive through `aiv_shard`, and a
  region-produced tile read by cube compute outside must leave through `aic_gather`;
- all crossings of one function ride one pipe, so crossings in a NONE region cannot sit
  beside crossings in an UP_DOWN / LEFT_RIGHT region.
"""

from __future__ import annotations

from ...ir.enums import MemorySpace, SplitMode
from ...ir.expr import Call, Var
from ...ir.function import Function
from ...ir.stmt import Assign, SplitAivScope, Stmt
from ..diagnostics import PassError
from .core_affinity import is_cube_compute, is_vector_compute, leaf_call
from .var_uses import child_stmts, expr_vars, walk_expr

CROSSINGS = ("tile.aiv_shard", "tile.aic_gather", "tensor.aiv_shard", "tensor.aic_gather")
DDR_VIEWS = ("tensor.slice", "tensor.reshape", "tensor.view")  # views of DDR: no compute of their own


def _leaves(s: Stmt, region: SplitAivScope | None, out: list[tuple[Stmt, SplitAivScope | None]]) -> None:
    if isinstance(s, SplitAivScope):
        region = s
    call = leaf_call(s)
    if call is not None:
        out.append((s, region))
    for c in child_stmts(s):
        _leaves(c, region, out)


def check_aiv_split(fn: Function, core: bool) -> None:
    """Raise `PassError` for the first placement rule `fn` breaks (`core`: fn runs on a core)."""
    if not _has_region(fn.body):
        return
    leaves: list[tuple[Stmt, SplitAivScope | None]] = []
    _leaves(fn.body, None, leaves)
    cube_defs: set[Var] = set()
    region_defs: set[Var] = set()
    where = f"in function {fn.name!r}"
    for s, region in leaves:
        for call in _calls(leaf_call(s)):
            _check_call(call, s, region, core, where, cube_defs, region_defs)
        if isinstance(s, Assign):
            top = leaf_call(s)
            reads = set(expr_vars(s.value))
            if region is None and (is_cube_compute(top) or reads & cube_defs):
                cube_defs.add(s.var)  # cube results, and values derived from them on the cube side
            elif region is not None and top.op.name not in CROSSINGS:
                region_defs.add(s.var)
    _check_one_pipe(fn, leaves)


def _calls(call: Call) -> list[Call]:
    """`call` and the calls nested in its operands, innermost first."""
    out: list[Call] = []

    def visit(e) -> None:
        if isinstance(e, Call):
            out.append(e)

    walk_expr(call, visit)
    return out[::-1]


def _check_call(call: Call, s: Stmt, region: SplitAivScope | None, core: bool, where: str,
                cube_defs: set[Var], region_defs: set[Var]) -> None:
    name = call.op.name
    if region is not None and is_cube_compute(call):
        raise PassError(f"cube op {name} inside a split_aiv region {where}: cube work runs on the AIC, "
                        f"outside every region", s.span)
    if region is None and name in CROSSINGS:
        raise PassError(f"{name.split('.')[1]} outside every split_aiv region {where}: it names the "
                        f"boundary of a region and must be written inside one", s.span)
    if region is None and core and is_vector_compute(call) and name not in DDR_VIEWS \
            and not _stores_cube_result(call, cube_defs):
        raise PassError(f"vector op {name} outside every split_aiv region {where}: once a function "
                        f"opens a region, its vector work must be inside one (use mode=pl.SplitMode.NONE "
                        f"for a full-width phase)", s.span)
    reads = [a for a in call.args if isinstance(a, Var)]
    if region is not None and name not in CROSSINGS:
        for v in reads:
            if v in cube_defs:
                raise PassError(f"tile {v.name!r} produced by cube work is read inside a split_aiv "
                                f"region by {name} {where} without pl.aiv_shard: name the crossing", s.span)
    if region is None and _cube_side(call):
        for v in reads:
            if v in region_defs:
                raise PassError(f"tile {v.name!r} produced in a split_aiv region is read by cube-side op "
                                f"{name} {where} without pl.aic_gather: name the crossing", s.span)


def _stores_cube_result(call: Call, cube_defs: set[Var]) -> bool:
    """A `tensor.assemble` writing a cube result into a DDR tensor: the cube stores it."""
    if call.op.name != "tensor.assemble":
        return False
    src = call.args[1]
    return src in cube_defs or (isinstance(src, Call) and is_cube_compute(src))


def _cube_side(call: Call) -> bool:
    """Cube compute, or a move into a cube buffer."""
    if call.op.name == "tile.move":
        return call.kwargs.get("target_memory") in (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right)
    return is_cube_compute(call)


def _has_region(s: Stmt) -> bool:
    return isinstance(s, SplitAivScope) or any(_has_region(c) for c in child_stmts(s))


def _check_one_pipe(fn: Function, leaves: list[tuple[Stmt, SplitAivScope | None]]) -> None:
    split_kind: tuple[bool, Stmt] | None = None
    for s, region in leaves:
        if region is None or not any(c.op.name in CROSSINGS for c in _calls(leaf_call(s))):
            continue
        no_split = region.mode is SplitMode.NONE
        if split_kind is None:
            split_kind = (no_split, s)
        elif split_kind[0] != no_split:
            raise PassError(f"function {fn.name!r} has crossings in both a mode=NONE split_aiv region and "
                            f"a data-parallel (UP_DOWN / LEFT_RIGHT) one; all crossings of a function share "
                            f"one pipe, which is split or not for its whole lifetime (line "
                            f"{split_kind[1].span.begin_line}): put the phases in separate "
                            f"pl.at(level=pl.Level.CORE_GROUP) scopes", s.span)
