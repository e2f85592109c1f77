"""RebindWrittenOperands: a write op evaluated for its effect rebinds what it writes.

`pl.store(t, [0, 0], c)` as a statement writes `c` in place; so do a statement
`pl.assemble(c, x, [0, 0])` and `pl.write(c, [i], v)` (and `c[i, j] = v`). The op's result
is the written value after the write, so the statement becomes `c = pl.store(t, [0, 0], c)`:
ConvertToSSA then threads the new version through loops and branches, and an outlined scope
returns it and the caller is rebound to the call's result, so a later `return c` reads the
written tensor. Likewise a loop whose iter arg starts as tensor `c` and is only written in
place (`for i, (o,) in pl.range(..., init_values=(c,))` with `o = pl.store(t, ..., o)`) ends
with `c` bound to its result: the loop wrote `c`'s buffer. Only ops (whose registry facts
name one written operand, a Var of the result's type) are rebound; a call of a program
function with an Out / InOut argument is not (InOutUseValid asks for its result to be used
instead).

A window `w = tile.slice(t, shape, offset)` shares `t`'s buffer, so an accumulating op
(`matmul_acc`, whose result reuses its accumulator's buffer) on `w` updates `t` too: after
it comes `t = tile.assemble(t, result, offset)`, and the result is again a window of `t`.
A window stays one while neither it, `t` nor a variable of `offset` is rebound otherwise;
through a loop only what holds on every iteration does.
"""

from __future__ import annotations

from ..ir.equality import structural_equal
from ..ir.expr import Call, Expr, IterArg, Var
from ..ir.function import Function, Program
from ..ir.ops.registry import Op, make_call
from ..ir.stmt import Assign, Eval, For, If, Stmt, While, Yield, flatten, seq
from ..ir.types import TensorType, TileType
from ..ir.visitor import IRMutator
from .analysis.memory_effects import call_effects, op_operands
from .analysis.var_uses import child_stmts, expr_vars, stmt_defs, walk_stmts
from .framework import FunctionPass, register_pass

Windows = dict[Var, tuple[Var, Expr]]  # window var -> (parent tile, offset)


def written_var(e: object) -> Var | None:
    """The Var an op call writes, when rebinding it to the call's result is exact."""
    if not (isinstance(e, Call) and isinstance(e.op, Op)):
        return None
    _, writes = call_effects(e, {})
    if len(writes) != 1 or not isinstance(writes[0], Var):
        return None
    return writes[0] if structural_equal(writes[0].type, e.type) else None


class _Rebinder(IRMutator):
    mutate_types = False

    def visit_Eval(self, s: Eval) -> Stmt:
        target = written_var(s.expr)
        return s if target is None else Assign(target, s.expr, s.span)

    def visit_For(self, s: For) -> Stmt:
        new = self.generic_mutate(s)
        pairs = enumerate(zip(new.iter_args, new.return_vars))
        carried = [Assign(arg.init, ret, s.span) for slot, (arg, ret) in pairs
                   if _starts_from_tensor(arg) and _written_in_place(new.body, slot, arg)]
        return seq([new, *carried], s.span) if carried else new


def _starts_from_tensor(arg: IterArg) -> bool:
    """An iter arg whose initial value is a tensor Var (not an outer loop's iter arg)."""
    return type(arg.init) is Var and isinstance(arg.init.type, TensorType)


def _written_in_place(body: Stmt, slot: int, arg: Var) -> bool:
    """Whether a loop yields, in `slot`, its iter arg `arg` as written in place (a chain of
    write ops from `arg`): then its result is the tensor it started from, so the loop
    rebinds that (`for ..., (o,) in pl.range(..., init_values=(out,))` storing into `o`
    leaves `out` written, as the reference's tensors are)."""
    stmts = flatten(body)
    last = stmts[-1] if stmts else None
    if not isinstance(last, Yield) or slot >= len(last.values):
        return False
    defs = {st.var: st.value for st in stmts if isinstance(st, Assign)}
    v, seen = last.values[slot], set()
    while v is not arg:
        if not isinstance(v, Var) or v in seen or written_var(defs.get(v)) is None:
            return False
        seen.add(v)
        v = written_var(defs[v])
    return True


def _op_call(s: Stmt, name: str | None = None) -> Call | None:
    v = s.value if isinstance(s, Assign) else None
    if isinstance(v, Call) and isinstance(v.op, Op) and (name is None or v.op.name == name):
        return v
    return None


def _window_of(s: Stmt) -> tuple[Var, Expr] | None:
    """(parent, offset) when `s` binds a plain window of a tile Var."""
    c = _op_call(s, "tile.slice")
    if c is None or c.kwargs.get("valid_shape") is not None or c.kwargs.get("drop_dims") is not None:
        return None
    operands = dict(op_operands(c))
    parent = operands["input"]
    return (parent, operands["offset"]) if isinstance(parent, Var) and isinstance(parent.type, TileType) \
        else None


def _accumulated_window(s: Stmt, live: Windows) -> tuple[Var, Expr] | None:
    """The window an accumulating op in `s` writes through (None if it writes none)."""
    c = _op_call(s)
    if c is None or c.op.facts.accumulator is None:
        return None
    acc = dict(op_operands(c)).get(c.op.facts.accumulator)
    return live.get(acc) if isinstance(acc, Var) else None


def _kill(live: Windows, v: Var) -> None:
    for w, (parent, offset) in list(live.items()):
        if v is w or v is parent or v in expr_vars(offset):
            del live[w]


class _WriteThrough:
    """Inserts the write-back of every accumulation into a window (see the module doc)."""

    def __init__(self) -> None:
        self.changed = False

    def block(self, s: Stmt, live: Windows) -> Stmt:
        out: list[Stmt] = []
        for st in flatten(s):
            out.extend(self.stmt(st, live))
        return seq(out, s.span)

    def stmt(self, s: Stmt, live: Windows) -> list[Stmt]:
        if isinstance(s, Assign):
            through = _accumulated_window(s, live)
            window = _window_of(s)
            _kill(live, s.var)
            if window is not None:
                live[s.var] = window
            if through is None:
                return [s]
            parent, offset = through
            self.changed = True
            live[s.var] = through
            back = make_call("tile.assemble", [parent, s.var, offset], {}, s.span)
            return [s, Assign(parent, back, s.span)]
        if isinstance(s, (For, While)):
            if isinstance(s, For):
                _kill(live, s.loop_var)
            while True:  # the windows that survive every iteration
                trial = dict(live)
                self.block(s.body, trial)
                kept = {w: v for w, v in live.items() if trial.get(w) == v}
                if kept == live:
                    break
                live.clear()
                live.update(kept)
            new = s.replace(body=self.block(s.body, dict(live)))
            for v in stmt_defs(s):
                _kill(live, v)
            return [new]
        if isinstance(s, If):
            branches, states = {}, []
            for field in ("then_body", "else_body"):
                body = getattr(s, field)
                state = dict(live)
                if body is not None:
                    branches[field] = self.block(body, state)
                states.append(state)
            live.clear()
            live.update({w: v for w, v in states[0].items() if states[1].get(w) == v})
            for v in s.return_vars:
                _kill(live, v)
            return [s.replace(**branches)]
        if child_stmts(s):  # a scope: its body runs once, in order
            new = s.replace(body=self.block(s.body, live))
            for v in stmt_defs(s):
                _kill(live, v)
            return [new]
        return [s]


@register_pass
class RebindWrittenOperands(FunctionPass):
    name = "RebindWrittenOperands"
    invalidated = frozenset({"SSAForm"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if any((isinstance(s, For) and any(map(_starts_from_tensor, s.iter_args)))
               or (isinstance(s, Eval) and written_var(s.expr)) for s in walk_stmts(fn.body)):
            fn = fn.replace(body=_Rebinder().visit_stmt(fn.body))
        if not any(_window_of(s) for s in walk_stmts(fn.body)):
            return fn
        through = _WriteThrough()
        body = through.block(fn.body, {})
        return fn.replace(body=body) if through.changed else fn


__all__ = ["RebindWrittenOperands", "written_var"]
