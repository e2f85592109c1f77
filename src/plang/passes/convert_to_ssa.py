"""ConvertToSSA: turn non-SSA IR (a Var bound several times) into SSA.

Each re-binding gets a fresh Var and later uses follow it. Control flow merges values
explicitly: a name a loop body re-binds that is read in the next iteration (or after the
loop) becomes an iter arg, yielded at the end of the body and bound to a return var after
the loop; a name an `if` re-binds that is read after it becomes a return var of the `if`,
yielded by both branches (an `else: yield` of the old value is added when needed).
Liveness decides what is carried, so dead temporaries are not threaded through. A name first
bound inside a loop and read after it is carried too, starting from zero (a scalar), another
value of its type (as the reference does) or a new tile; it keeps that value when the loop runs
no iteration.
`Scope` / `split_aiv` bodies are not value-returning: they share the enclosing bindings.
Explicit `pl.yield_` iter args / return vars are kept, carried names are appended.
"""

from __future__ import annotations

from ..dtypes import BOOL
from ..ir.enums import ParamDirection
from ..ir.expr import ConstBool, ConstFloat, ConstInt, Expr, IterArg, Var
from ..ir.function import Function, Program
from ..ir.ops import make_call
from ..ir.stmt import (
    Assign,
    Break,
    Continue,
    Eval,
    For,
    If,
    Return,
    Scope,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    flatten,
    seq,
)
from ..ir.types import ScalarType, TileType
from .analysis.dataflow import Dataflow
from .analysis.retype import types_equal
from .analysis.var_rewrite import VarRewriter
from .analysis.var_uses import defined_vars, expr_vars
from .diagnostics import PassError
from .framework import FunctionPass, register_pass


@register_pass
class ConvertToSSA(FunctionPass):
    name = "ConvertToSSA"
    required = frozenset({"StructuredControlFlow"})
    produced = frozenset({"SSAForm"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        return _Converter(fn).function()


class _Branch:
    """A converted branch / loop body: statements, bindings at its end, its yield values."""

    def __init__(self, stmts: list[Stmt], env: dict[Var, Expr], yields: list[Expr] | None) -> None:
        self.stmts, self.env, self.yields = stmts, env, yields
        self.returns = bool(stmts) and isinstance(stmts[-1], Return)


class _Converter:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.flow = Dataflow()
        self.bound: set[Var] = set(fn.params)
        self.env: dict[Var, Expr] = {p: p for p in fn.params}
        self.rewriter = VarRewriter()
        self.prologue: list[Stmt] = []  # bindings the loop being converted needs before it

    def function(self) -> Function:
        return self.fn.replace(body=seq(self.block(flatten(self.fn.body), frozenset())))

    # -- helpers -----------------------------------------------------------------
    def subst(self, e: Expr) -> Expr:
        self.rewriter.mapping = self.env
        return self.rewriter.expr(e)

    def subst_value(self, value: object) -> object:
        """Substitute inside an attrs mapping / tuple holding expressions."""
        self.rewriter.mapping = self.env
        return self.rewriter.value(value)

    def bind(self, v: Var) -> Var:
        """The Var a binding of `v` defines: `v` itself the first time, a fresh one after (or
        when its type mentions a re-bound name: a dynamic extent names the current binding)."""
        self.rewriter.mapping = self.env
        t = self.rewriter.type(v.type)
        new = v if v not in self.bound and t is v.type else Var(v.name, t, v.span)
        self.bound.add(new)
        self.env[v] = new
        return new

    def fresh(self, v: Var) -> Var:
        new = Var(v.name, v.type, v.span)
        self.bound.add(new)
        return new

    def _escaping_init(self, v: Var) -> Expr | None:
        """Where a name first bound inside a loop and read after it starts (what it holds when
        the loop runs no iteration), as in the reference: zero for a scalar, else the current
        value of an Out / InOut parameter or, failing that, of any name of the same type."""
        t = v.type
        if isinstance(t, ScalarType):
            return ConstBool(False) if t.dtype is BOOL else ConstFloat(0.0, t.dtype) if t.dtype.is_float \
                else ConstInt(0, t.dtype)
        outs = [p for p, d in zip(self.fn.params, self.fn.param_directions) if d is not ParamDirection.In]
        for key in outs + list(self.env):
            value = self.env.get(key)
            if value is not None and types_equal(value.type, t):
                return value
        if isinstance(t, TileType):  # a new (uninitialised) tile bound before the loop
            create = make_call("tile.create", [list(t.shape), t.dtype],
                               {"target_memory": t.memory_space, "valid_shape": t.valid_shape}, v.span)
            if types_equal(create.type, t):
                init = self.fresh(v)
                self.prologue.append(Assign(init, create, v.span))
                return init
        return None

    def block(self, stmts: list[Stmt], live_out: frozenset[Var]) -> list[Stmt]:
        out: list[Stmt] = []
        for s, live in zip(stmts, self.flow.live_after(stmts, live_out)):
            out.extend(self.stmt(s, live))
        return out

    def branch(self, body: Stmt | None, live_out: frozenset[Var]) -> _Branch:
        """Convert `body` in a copy of the current bindings (restored afterwards)."""
        saved = self.env
        self.env = dict(saved)
        stmts = flatten(body)
        trailing = stmts.pop() if stmts and isinstance(stmts[-1], Yield) else None
        if trailing is not None:
            live_out = live_out | {v for e in trailing.values for v in expr_vars(e)}
        out = self.block(stmts, live_out)
        yields = None if trailing is None else [self.subst(v) for v in trailing.values]
        result = _Branch(out, self.env, yields)
        self.env = saved
        return result

    # -- statements ----------------------------------------------------------------
    def stmt(self, s: Stmt, live: frozenset[Var]) -> list[Stmt]:
        if isinstance(s, Assign):
            value = self.subst(s.value)
            return [s.replace(var=self.bind(s.var), value=value)]
        if isinstance(s, Eval):
            return [s.replace(expr=self.subst(s.expr))]
        if isinstance(s, (Return, Yield)):
            return [s.replace(values=tuple(self.subst(v) for v in s.values))]
        if isinstance(s, If):
            return [self.if_(s, live)]
        if isinstance(s, (For, While)):
            enclosing, self.prologue = self.prologue, []
            loop = self.loop(s, live)
            prologue, self.prologue = self.prologue, enclosing
            return [*prologue, loop]
        if isinstance(s, Scope):
            attrs = self.subst_value(s.attrs)
            index_var = None if s.index_var is None else self.bind(s.index_var)
            body = self.block(flatten(s.body), live)
            task_var = None if s.task_var is None else self.bind(s.task_var)
            return [s.replace(attrs=attrs, index_var=index_var, task_var=task_var, body=seq(body))]
        if isinstance(s, SplitAivScope):
            lane = self.bind(s.lane_var)
            return [s.replace(lane_var=lane, body=seq(self.block(flatten(s.body), live)))]
        if isinstance(s, (Break, Continue)):
            raise PassError(f"'{type(s).__name__.lower()}' must be removed by CtrlFlowTransform "
                            "before ConvertToSSA", s.span, "ConvertToSSA")
        return [s]

    def if_(self, s: If, live: frozenset[Var]) -> Stmt:
        cond = self.subst(s.cond)
        before = self.env
        then = self.branch(s.then_body, live)
        other = self.branch(s.else_body, live)
        merged: list[Var] = []
        if then.returns and not other.returns:
            self.env = dict(other.env)
        elif other.returns and not then.returns:
            self.env = dict(then.env)
        elif not then.returns:
            merged = self._merged(s, live, before, then.env, other.env)
        rvs = [self.bind(v) for v in s.return_vars]
        rvs += [self.fresh(v) for v in merged]
        for v, rv in zip(merged, rvs[len(s.return_vars):]):
            self.env[v] = rv
        then_body = self._with_yield(then, [then.env[v] for v in merged])
        else_body = None
        if s.else_body is not None or merged:
            else_body = self._with_yield(other, [other.env[v] for v in merged])
        return s.replace(cond=cond, then_body=then_body, else_body=else_body, return_vars=tuple(rvs))

    def _merged(self, s: If, live: frozenset[Var], before: dict[Var, Expr],
                then_env: dict[Var, Expr], else_env: dict[Var, Expr]) -> list[Var]:
        names = dict(defined_vars(s.then_body))
        if s.else_body is not None:
            names.update(defined_vars(s.else_body))
        merged = []
        for v in names:
            if v not in live or (then_env.get(v) is before.get(v) and else_env.get(v) is before.get(v)):
                continue
            if v not in then_env or v not in else_env:
                raise PassError(f"variable '{v.name}' is assigned in only one branch of this if and "
                                "used after it; assign it before the if or in both branches",
                                s.span, "ConvertToSSA")
            merged.append(v)
        return merged

    @staticmethod
    def _with_yield(branch: _Branch, extra: list[Expr]) -> Stmt:
        values = (branch.yields or []) + extra
        if branch.yields is None and not extra or branch.returns:
            return seq(branch.stmts)
        return seq(branch.stmts + [Yield(values)])

    def loop(self, s: For | While, live: frozenset[Var]) -> Stmt:
        exposed = self.flow.exposed_reads(s.body)
        cond_reads = set(expr_vars(s.cond)) if isinstance(s, While) else set()
        needed = exposed | live | cond_reads
        carried: list[Var] = []
        for v in defined_vars(s.body):
            if v in self.env and v in needed:
                carried.append(v)
            elif v not in self.env and v in live and not isinstance(v, IterArg):
                init = self._escaping_init(v)
                if init is None:
                    raise PassError(f"variable '{v.name}' is first assigned inside this loop and used "
                                    "after it, and nothing of its type is bound before the loop to "
                                    "start it from; assign it before the loop", s.span, "ConvertToSSA")
                self.env[v] = init
                carried.append(v)
        header = {}
        if isinstance(s, For):
            header = dict(start=self.subst(s.start), stop=self.subst(s.stop), step=self.subst(s.step),
                          attrs=self.subst_value(s.attrs))
        inits = [self.subst(a.init) for a in s.iter_args]
        saved = self.env
        self.env = dict(saved)
        if isinstance(s, For):
            header["loop_var"] = self.bind(s.loop_var)
        iter_args = []
        for a, init in zip(s.iter_args, inits):
            new = a if a not in self.bound and init is a.init else IterArg(a.name, a.type, init, a.span)
            self.bound.add(new)
            self.env[a] = new
            iter_args.append(new)
        for v in carried:
            arg = IterArg(v.name, v.type, saved[v], v.span)
            self.bound.add(arg)
            self.env[v] = arg
            iter_args.append(arg)
        if isinstance(s, While):
            header["cond"] = self.subst(s.cond)
        body = self.branch(s.body, frozenset(needed))
        self.env = saved
        rvs = [self.bind(v) for v in s.return_vars]
        for v in carried:
            rv = self.fresh(v)
            self.env[v] = rv
            rvs.append(rv)
        new_body = self._with_yield(body, [body.env[v] for v in carried])
        return s.replace(iter_args=tuple(iter_args), body=new_body, return_vars=tuple(rvs), **header)
