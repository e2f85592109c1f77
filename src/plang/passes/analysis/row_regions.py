"""Row-local statements: the facts row fusion (`FuseTileOps`) decides by and kernel codegen
re-checks a `with pl.fused(rows=R)` region against.

A statement is row-local with R rows when row r of its result depends only on row r of its
tile operands (`OpFacts.row_local`: loads, stores, elementwise ops, row reductions and row
and column broadcasts) and every tile it touches has R static rows (leading dims folded into
rows), besides a column broadcast's [1, N] operand: a tile from before the region that every
row reads whole.
"""

from __future__ import annotations

from collections import Counter

from ...ir.enums import AtomicType, ScopeKind
from ...ir.expr import Call, GlobalVar, Var
from ...ir.ops.registry import Pattern
from ...ir.stmt import Assign, Eval, Scope, Stmt, flatten
from ...ir.types import ScalarType, TileType
from .var_uses import expr_vars, stmt_defs, stmt_exprs, walk_expr, walk_stmts


def op_call(st: Stmt) -> Call | None:
    """The op call a statement evaluates as its whole value (None for anything else)."""
    v = st.value if isinstance(st, Assign) else st.expr if isinstance(st, Eval) else None
    return v if isinstance(v, Call) and not isinstance(v.op, GlobalVar) else None


def has_call(e) -> bool:
    found = []
    walk_expr(e, lambda x: found.append(x) if isinstance(x, Call) else None)
    return bool(found)


def is_pure_scalar(st: Stmt) -> bool:
    """A scalar assignment computed without any call (it cannot read what a region writes)."""
    return isinstance(st, Assign) and isinstance(st.var.type, ScalarType) and not has_call(st.value)


def tile_rows(t: TileType) -> int | None:
    """A tile's static row count with leading dims folded in (a rank-1 tile is one row)."""
    shape = t.static_shape
    if shape is None:
        return None
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows


def call_operands(call: Call) -> list:
    return list(call.args) + [v for v in call.kwargs.values() if isinstance(v, Var | Call)]


def row_count(st: Stmt, nested: bool = False) -> int | None:
    """R when `st` is a row-local statement whose tiles all have R static rows. Operands that
    are calls (fused producers) are row-local themselves when `nested` is set."""
    call = op_call(st)
    if call is None:
        return None
    return _call_rows(call, st.var.type if isinstance(st, Assign) else None, nested)


def _call_rows(call: Call, var_type, nested: bool) -> int | None:
    if not call.op.facts.row_local:
        return None
    if call.op.name == "tile.store" and call.kwargs.get("atomic") not in (None, AtomicType.None_):
        return None
    rows: set = set()
    broadcast = broadcast_row(call)
    for a in call_operands(call):
        if a is broadcast:
            continue
        if isinstance(a, Call):
            if not nested:
                return None
            inner = _call_rows(a, None, nested)
            if inner is None:
                return None
            rows.add(inner)
        elif isinstance(a.type, TileType):
            rows.add(tile_rows(a.type))
    for t in (call.type, var_type):
        if isinstance(t, TileType):
            rows.add(tile_rows(t))
    if len(rows) != 1 or None in rows:
        return None
    return rows.pop()


def broadcast_row(call: Call) -> Var | None:
    """A column broadcast's one-row tile variable (every row of the region reads all of it)."""
    if call.op.facts.pattern is not Pattern.COL_BROADCAST:
        return None
    rhs = call.args[1]
    one_row = isinstance(rhs, Var) and isinstance(rhs.type, TileType) and tile_rows(rhs.type) == 1
    return rhs if one_row else None


def use_counts(stmts: list[Stmt]) -> Counter:
    """Var -> how many times the statements (and those nested in them) read it."""
    counts: Counter = Counter()
    for top in stmts:
        for st in walk_stmts(top):
            for e in stmt_exprs(st):
                counts.update(expr_vars_all(e))
    return counts


def expr_vars_all(e) -> list[Var]:
    """Every Var occurrence in `e` (with repeats)."""
    out: list[Var] = []
    walk_expr(e, lambda x: out.append(x) if isinstance(x, Var) else None)
    return out


def tiles_read_before_defined(body: list[Stmt]) -> list[Var]:
    """Tile variables a region reads before (or without) defining them, in first-read order."""
    defined: set = set()
    out: dict = {}
    for top in body:
        for st in walk_stmts(top):
            for e in stmt_exprs(st):
                for v in expr_vars(e):
                    if isinstance(v.type, TileType) and v not in defined:
                        out.setdefault(v)
            defined.update(stmt_defs(st))
    return list(out)


def through_fused(stmts: list[Stmt]) -> list[Stmt]:
    """`stmts` with the bodies of `with pl.fused(..)` scopes spliced in (recursively)."""
    out: list[Stmt] = []
    for st in stmts:
        if isinstance(st, Scope) and st.kind is ScopeKind.Fused:
            out.extend(through_fused(flatten(st.body)))
        else:
            out.append(st)
    return out
