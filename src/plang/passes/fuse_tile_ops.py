"""FuseTileOps: the fusion decisions of core kernels, written into the IR for codegen to follow.

Three decisions, each visible in the printed IR and read back by the parser:

1. **Row regions** `with pl.fused(rows=R):` — a maximal run of row-local statements
   (`analysis/row_regions.py`) with R >= 2 rows in one block, lowered as one loop over rows
   so each row stays in L1. Pure scalar assignments inside the run move before it (unless
   an earlier statement of the run reads what they assign). A load after a store ends a run
   (it might read rows the store has not written yet). A run becomes a region only when it
   pays off: it has a row reduction, or a tile it defines is used more than once in it.
2. **Producers fused into their consumer** — a fusible op (`OpFacts.fusible`) whose result
   is used exactly once, directly by a later statement of the same block with only
   non-writing assignments in between, is written inside that use
   (`y = pl.tile.add(pl.tile.exp(x), b)`): codegen computes it chunk by chunk where it is
   read, never into a buffer. The consumer must stream its operands (a fusible op or a
   store; a reduction would need a buffer anyway), read it as a streamed operand
   (`OpFacts.streamed`: a matmul's B, packed as it is read, or its A, which a load leaves
   in DDR for the micro-kernel to read there), or be an `if` branch's yield;
   a loop's yield is not a consumer (its carried buffer is the better destination). A 2D
   `tile.transpose` whose single use is a matmul's B (directly or through moves) is fused
   there too, with a load it transposes: B is then packed from the loaded tile's columns.
3. **Single-pass reductions** `with pl.fused():` — a fusible producer computed into a buffer
   and a later sum / max / min / prod row reduction of it (only non-writing assignments in
   between) are computed in one pass over the elements; also a reduction of a single-use
   fusible op of the producer between them (a layer norm's ``c = x - mean`` and
   ``row_sum(mul(c, c))``: each chunk of c is written and squared in the same pass).

Regions are found first (on flat statements); 2 and 3 then apply in every block, region
bodies included.
"""

from __future__ import annotations

from ..ir.enums import ScopeKind
from ..ir.equality import structural_equal
from ..ir.expr import Call, GlobalVar, Var
from ..ir.function import Function, Program
from ..ir.ops import Pattern, Unit
from ..ir.stmt import Assign, For, If, Scope, SplitAivScope, Stmt, While, Yield, flatten, seq
from ..ir.types import TileType
from .analysis.row_regions import is_pure_scalar, op_call, row_count, use_counts
from .analysis.var_rewrite import substitute
from .analysis.var_uses import expr_vars, stmt_exprs
from .framework import FunctionPass, register_pass

_FOLDABLE = ("sum", "max", "min", "prod")


@register_pass
class FuseTileOps(FunctionPass):
    name = "FuseTileOps"
    invalidated = frozenset({"CallsFlattened"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not fn.func_type.is_core or fn.body is None:
            return fn
        counts = use_counts([fn.body])
        body = _Fuser(counts).block(fn.body, regions=True, yields=False)
        return fn if body is fn.body else fn.replace(body=body)


class _Fuser:
    def __init__(self, counts) -> None:
        self.counts = counts

    def block(self, s: Stmt, regions: bool, yields: bool) -> Stmt:
        stmts = flatten(s)
        out = self._regions(stmts) if regions else stmts
        out = [self._nested(st, regions) for st in out]
        out = self._fuse_producers(out, yields)
        out = self._single_pass_reductions(out)
        if len(out) == len(stmts) and all(a is b for a, b in zip(out, stmts)):
            return s
        return seq(out, s.span)

    def _nested(self, st: Stmt, regions: bool) -> Stmt:
        if isinstance(st, For) or isinstance(st, While):
            body = self.block(st.body, regions, yields=False)
            return st if body is st.body else st.replace(body=body)
        if isinstance(st, If):
            then = self.block(st.then_body, regions, yields=True)
            other = None if st.else_body is None else self.block(st.else_body, regions, yields=True)
            return st if then is st.then_body and other is st.else_body else st.replace(then_body=then,
                                                                                          else_body=other)
        if isinstance(st, Scope):
            if st.kind is ScopeKind.Fused and "rows" not in st.attrs:
                return st  # already one pass
            inner = regions and st.kind is not ScopeKind.Fused
            body = self.block(st.body, inner, yields=False)
            return st if body is st.body else st.replace(body=body)
        if isinstance(st, SplitAivScope):
            body = self.block(st.body, regions, yields=False)
            return st if body is st.body else st.replace(body=body)
        return st

    # -- 1. row regions ---------------------------------------------------------------------
    def _regions(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        i = 0
        while i < len(stmts):
            rows = row_count(stmts[i])
            if rows is None or rows < 2:
                out.append(stmts[i])
                i += 1
                continue
            j = _region_end(stmts, i, rows)
            run = stmts[i:j]
            if self._pays_off(run):
                body = [st for st in run if not is_pure_scalar(st)]
                out.extend(st for st in run if is_pure_scalar(st))
                out.append(Scope(ScopeKind.Fused, seq(body, body[0].span), {"rows": rows}, span=body[0].span))
            else:
                out.extend(run)
            i = j
        return out

    def _pays_off(self, run: list[Stmt]) -> bool:
        """A row reduction, or a tile defined in the run and used more than once in it."""
        inside = use_counts(run)
        for st in run:
            call = op_call(st)
            if call is None:
                continue
            if call.op.facts.pattern is Pattern.ROW_REDUCTION:
                return True
            if isinstance(st, Assign) and isinstance(st.var.type, TileType) and inside[st.var] > 1:
                return True
        return False

    # -- 2. producers fused into their consumer ----------------------------------------------
    def _fuse_producers(self, stmts: list[Stmt], yields: bool) -> list[Stmt]:
        stmts = list(stmts)
        gone: set[int] = set()
        into_b = self._transposes_into_b(stmts)
        for i, st in enumerate(stmts):
            if not (self._fusible(st) or i in into_b):
                continue
            for k in range(i + 1, len(stmts)):
                if k in gone:
                    continue
                later = stmts[k]
                if (_reads_directly(later, st.var, yields) or into_b.get(i) == k
                        or (k in into_b and op_call(later).args[0] is st.var)):
                    stmts[k] = substitute(later, {st.var: st.value})
                    gone.add(i)
                    break
                if not _harmless(later):
                    break
        return [st for i, st in enumerate(stmts) if i not in gone]

    def _transposes_into_b(self, stmts: list[Stmt]) -> dict[int, int]:
        """The 2D `tile.transpose` statements whose single use is a later matmul's B (only
        non-writing assignments in between), by the statement reading them: fused there, with
        a load they transpose, B's packing reads the loaded tile's columns (no transposed
        copy; its panels cacheable)."""
        found = {}
        for i, st in enumerate(stmts):
            if self._single_use(st, "tile.transpose") and len(st.var.type.shape) == 2:
                k = self._b_reader(stmts, i)
                if k is not None:
                    found[i] = k
        return found

    def _single_use(self, st: Stmt, op: str) -> bool:
        call = self._single_use_call(st)
        return call is not None and call.op.name == op

    def _single_use_call(self, st: Stmt) -> Call | None:
        """The op call of an assignment to a tile used exactly once (None otherwise)."""
        call = op_call(st)
        if isinstance(st, Assign) and call is not None and isinstance(st.var.type, TileType) \
                and self.counts[st.var] == 1:
            return call
        return None

    def _b_reader(self, stmts: list[Stmt], i: int) -> int | None:
        """The statement reading `stmts[i]`'s tile next, where it reads it as a matmul's B,
        directly or through single-use `tile.move`s (which pass a deferred tile through)."""
        var = stmts[i].var
        for k in range(i + 1, len(stmts)):
            calls = [e for e in _values(stmts[k]) if isinstance(e, Call)]
            if any(var in expr_vars(e) for e in calls):
                if any(_reads_as_b(e, var) for e in calls):
                    return k
                moves = self._single_use(stmts[k], "tile.move") and self._b_reader(stmts, k) is not None
                return k if moves else None
            if not _harmless(stmts[k]):
                return None
        return None

    def _fusible(self, st: Stmt) -> bool:
        call = self._single_use_call(st)
        return call is not None and call.op.facts.fusible

    # -- 3. single-pass reductions ---------------------------------------------------------
    def _single_pass_reductions(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        i = 0
        while i < len(stmts):
            j = _reduction_of(stmts, i, self.counts)
            if j is None:
                out.append(stmts[i])
                i += 1
                continue
            body = stmts[i:j + 1]
            out.append(Scope(ScopeKind.Fused, seq(body, stmts[i].span), span=stmts[i].span))
            i = j + 1
        return out


def _region_end(stmts: list[Stmt], i: int, rows: int) -> int:
    """The end of the row-local run starting at `i` (trailing scalar assignments excluded)."""
    j, stored, read = i, False, set()
    while j < len(stmts):
        st = stmts[j]
        if is_pure_scalar(st):
            if st.var in read:  # hoisting it would change what an earlier statement reads
                break
        else:
            call = op_call(st) if row_count(st) == rows else None
            if call is None or (call.op.name == "tile.load" and stored):
                break
            stored = stored or call.op.name == "tile.store"
        for e in stmt_exprs(st):
            read |= set(expr_vars(e))
        j += 1
    while is_pure_scalar(stmts[j - 1]):
        j -= 1
    return j


def _reduction_of(stmts: list[Stmt], i: int, counts) -> int | None:
    """The index of a foldable row reduction that can share `stmts[i]`'s pass: of its tile,
    or of a single-use fusible op of it (`_feeds`) in between."""
    st = stmts[i]
    call = op_call(st)
    if not (isinstance(st, Assign) and call is not None and call.op.facts.fusible
            and isinstance(st.var.type, TileType)):
        return None
    reduced, defined = {st.var}, set()
    for k in range(i + 1, len(stmts)):
        later = stmts[k]
        red = op_call(later)
        if (isinstance(later, Assign) and red is not None and red.op.facts.pattern is Pattern.ROW_REDUCTION
                and red.op.facts.reduction in _FOLDABLE and red.args[0] in reduced):
            return k
        if len(reduced) == 1 and _feeds(later, st.var, counts, defined):
            reduced.add(later.var)
        elif not _harmless(later):
            return None
        if isinstance(later, Assign):
            defined.add(later.var)
    return None


def _feeds(st: Stmt, var: Var, counts, defined: set) -> bool:
    """`st` computes, from `var`'s tile, a tile of its type that only a reduction reads
    (``mul(c, c)`` of a variance), and reads nothing assigned since `var`: it is then
    computed chunk by chunk in `var`'s pass, from the chunks just written."""
    call = op_call(st)
    if not (isinstance(st, Assign) and call is not None and call.op.facts.fusible
            and counts[st.var] == 1 and structural_equal(st.var.type, var.type)):
        return False
    reads = set(expr_vars(call))
    return var in reads and not reads & defined


def _reads_directly(st: Stmt, var: Var, yields: bool) -> bool:
    """`st` streams `var` into its own computation: an elementwise-style op or a store
    reading it, an op reading it as a streamed operand (a matmul's B, packed as it is read,
    or its A; also as a yielded value), or, where allowed, a branch's yield. An op that needs its
    operand in a buffer gains nothing from fusion."""
    call = op_call(st)
    if call is not None:
        facts = call.op.facts
        streams = facts.fusible or (facts.unit is Unit.MEMORY and bool(facts.writes))
        return (streams and var in expr_vars(call)) or _streamed_operand(call, var)
    if not isinstance(st, Yield):
        return False
    if yields and any(var in expr_vars(e) for e in st.values):
        return True
    return any(isinstance(e, Call) and not isinstance(e.op, GlobalVar) and _streamed_operand(e, var)
               for e in st.values)


def _values(st: Stmt) -> list:
    """The expressions a statement evaluates (a yield's values, an assignment's value)."""
    if isinstance(st, Yield):
        return list(st.values)
    call = op_call(st)
    return [] if call is None else [call]


def _reads_as_b(call: Call, var: Var) -> bool:
    """`call` (or an op call nested in it) reads `var` as a matmul's B, directly or through
    `tile.move`s (which pass a deferred tile through)."""
    if isinstance(call.op, GlobalVar):
        return False

    def moved(e) -> bool:
        return e is var or (isinstance(e, Call) and e.op.name == "tile.move" and moved(e.args[0]))
    return any(moved(e) for e in call.op.streamed_args(call.args, only="rhs")) or any(
        isinstance(e, Call) and _reads_as_b(e, var) for e in call.args)


def _streamed_operand(call: Call, var: Var) -> bool:
    return any(a is var for a in call.op.streamed_args(call.args))


def _harmless(st: Stmt) -> bool:
    """An assignment that writes no memory a fused producer could read (or a fused region
    of such assignments: a producer may move past a row softmax)."""
    if isinstance(st, Scope) and st.kind is ScopeKind.Fused:
        return all(_harmless(inner) for inner in flatten(st.body))
    if not isinstance(st, Assign):
        return False
    v = st.value
    return not isinstance(v, Call) or (op_call(st) is not None and not v.op.facts.writes)
