"""Carry type changes from rewritten calls to every consumer.

`Retyper` is a `VarRewriter` that re-deduces every op call whose operands changed and
rebinds the assigned Var when the value's type differs (loop iter args follow their
inits, loop / branch return vars their carried values). A pass that changes a tile's
shape or memory space rewrites the producing call and lets the Retyper do the rest.
`rebuild_call` re-deduces one op call from some new operands.
"""

from __future__ import annotations

from typing import Any

from ...ir.expr import Call, Expr, IterArg, Var
from ...ir.ops import make_call
from ...ir.ops.registry import Op
from ...ir.stmt import Assign, For, If, Stmt, While, Yield, flatten
from ...ir.types import TileType, Type
from .retype import types_equal
from .var_rewrite import VarRewriter


def op_operands_by_name(call: Call) -> dict[str, Any]:
    """Every operand and attribute of an op call, by parameter name."""
    op: Op = call.op
    required = [p.name for p in op.params if p.is_expr and p.required]
    return {**dict(zip(required, call.args)), **dict(call.kwargs)}


def rebuild_call(call: Call, **changes: Any) -> Call:
    """`call` with some operands / attributes replaced (by parameter name), re-deduced;
    a change to None drops that optional operand."""
    kw = op_operands_by_name(call)
    kw.update(changes)
    return make_call(call.op, (), {k: v for k, v in kw.items() if v is not None}, call.span)


class Retyper(VarRewriter):
    """Propagate type changes through calls, bindings, loops and branches."""

    def expr(self, e: Expr) -> Expr:
        new = super().expr(e)
        if new is not e and isinstance(new, Call) and isinstance(new.op, Op):
            return rebuild_call(new)
        return new

    def retarget(self, v: Var, t: Type) -> Var:
        """The Var to bind for `v` now that its value has type `t` (a tile keeps the memory
        space `v` was given when deduction leaves it open)."""
        if isinstance(t, TileType) and t.memory_space is None and isinstance(v.type, TileType):
            t = TileType(t.shape, t.dtype, v.type.memory_space, t.valid_shape)
        if types_equal(v.type, t):
            return self.bind(v)
        new = Var(v.name, t, v.span)
        self.mapping[v] = new
        return new

    def stmt_Assign(self, s: Assign) -> Stmt:
        value = self.expr(s.value)
        var = self.retarget(s.var, value.type) if value is not s.value else self.bind(s.var)
        return s if var is s.var and value is s.value else s.replace(var=var, value=value)

    def bind_iter_arg(self, a: IterArg) -> IterArg:
        init = self.expr(a.init)
        if init is not a.init and not types_equal(a.type, init.type):
            new = IterArg(a.name, init.type, init, a.span)
            self.mapping[a] = new
            return new
        return super().bind_iter_arg(a)

    def stmt_For(self, s: For) -> Stmt:
        new = super().stmt_For(s)
        return self._retype_results(new, s.return_vars, [a.type for a in new.iter_args])

    def stmt_While(self, s: While) -> Stmt:
        new = super().stmt_While(s)
        return self._retype_results(new, s.return_vars, [a.type for a in new.iter_args])

    def stmt_If(self, s: If) -> Stmt:
        new = super().stmt_If(s)
        stmts = flatten(new.then_body)
        if not stmts or not isinstance(stmts[-1], Yield):
            return new
        return self._retype_results(new, s.return_vars, [v.type for v in stmts[-1].values])

    def _retype_results(self, new: Stmt, old_rvs: tuple[Var, ...], types: list[Type]) -> Stmt:
        rvs = []
        for rv_new, rv_old, t in zip(new.return_vars, old_rvs, types):
            if types_equal(rv_new.type, t):
                rvs.append(rv_new)
            else:
                v = Var(rv_new.name, t, rv_new.span)
                self.mapping[rv_old] = v
                rvs.append(v)
        return new.replace(return_vars=tuple(rvs))

