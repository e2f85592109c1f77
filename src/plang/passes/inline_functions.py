"""InlineFunctions: splice every `FunctionType.Inline` function into its call sites.

A call `x = self.f(a, b)` of an Inline function becomes the callee's body with its locals
renamed (fresh Vars), its parameters replaced by the arguments (a non-trivial argument, or
one whose parameter the body re-binds, is first bound to a Var named like the parameter)
and its trailing `return v` turned into the value of the call (a tuple for several values).
Calls nested in expressions are hoisted before their statement; inline functions calling
inline functions are expanded first; recursion is an error. Inline functions are then dropped.
"""

from __future__ import annotations

from ..ir.enums import FunctionType
from ..ir.expr import Call, ConstBool, ConstFloat, ConstInt, Expr, GlobalVar, MakeTuple, Var
from ..ir.function import Function, Program
from ..ir.stmt import Assign, Eval, For, Return, Stmt, While, flatten, seq
from ..ir.types import ShapedType, dims_equal, format_shape
from .analysis.renaming import rename_locals
from .analysis.var_rewrite import VarRewriter
from .analysis.var_uses import calls_in, defined_vars, walk_stmts
from .diagnostics import PassError
from .framework import Pass, register_pass
from .properties import register_property

ATOMS = (Var, ConstInt, ConstFloat, ConstBool)


def _inline_callee(call: Call, program: Program) -> Function | None:
    if isinstance(call.op, GlobalVar):
        fn = program.functions.get(call.op.name)
        if fn is not None and fn.func_type is FunctionType.Inline:
            return fn
    return None


def check_no_inline_functions(program: Program) -> None:
    for fn in program.functions.values():
        if fn.func_type is FunctionType.Inline:
            raise PassError(f"function '{fn.name}' is an Inline function (run InlineFunctions)", fn.span)


register_property("NoInlineFunctions", check_no_inline_functions, "No Inline functions remain.")


@register_pass
class InlineFunctions(Pass):
    name = "InlineFunctions"
    produced = frozenset({"NoInlineFunctions"})
    invalidated = frozenset({"SSAForm"})

    def run(self, program: Program) -> Program:
        inline = {n: f for n, f in program.functions.items() if f.func_type is FunctionType.Inline}
        if not inline:
            return program
        done: dict[str, Function] = {}
        for name in inline:
            self._expand_inline(name, program, done, [])
        expanded = program.with_functions(
            [done.get(f.name, f) for f in program.functions.values()])
        functions = [_Splicer(expanded).function(f) for f in expanded.functions.values()
                     if f.func_type is not FunctionType.Inline]
        return program.with_functions(functions)

    def _expand_inline(self, name: str, program: Program, done: dict[str, Function],
                       stack: list[str]) -> None:
        """Expand the inline calls inside inline function `name` (callees first)."""
        if name in done:
            return
        if name in stack:
            cycle = " -> ".join(stack[stack.index(name):] + [name])
            raise PassError(f"inline functions call each other recursively: {cycle}",
                            program.functions[name].span, self.name)
        fn = program.functions[name]
        for call in calls_in(fn.body):
            callee = _inline_callee(call, program)
            if callee is not None:
                self._expand_inline(callee.name, program, done, stack + [name])
        current = program.with_functions([done.get(f.name, f) for f in program.functions.values()])
        done[name] = _Splicer(current).function(fn)


class _Splicer:
    """Replaces inline calls inside one function's statements."""

    def __init__(self, program: Program) -> None:
        self.program = program

    def function(self, fn: Function) -> Function:
        if not any(_inline_callee(c, self.program) for c in calls_in(fn.body)):
            return fn
        return fn.replace(body=seq(self.block(fn.body)))

    def block(self, s: Stmt) -> list[Stmt]:
        out: list[Stmt] = []
        for st in flatten(s):
            out.extend(self.stmt(st))
        return out

    def stmt(self, s: Stmt) -> list[Stmt]:
        if not any(_inline_callee(c, self.program) for c in calls_in(s)):
            return [s]
        prefix: list[Stmt] = []
        if isinstance(s, Eval) and isinstance(s.expr, Call) and _inline_callee(s.expr, self.program):
            self.splice(s.expr, prefix, s)
            return prefix
        if isinstance(s, While) and any(_inline_callee(c, self.program) for c in calls_in(Eval(s.cond))):
            raise PassError("a call of an inline function in a while condition cannot be inlined; "
                            "compute it in the loop body", s.span, "InlineFunctions")
        if isinstance(s, (For, While)):
            s = self.splice_iter_inits(s, prefix)
        changes = {}
        for field, value in s.fields():
            if isinstance(value, Stmt):
                changes[field] = seq(self.block(value))
            elif isinstance(value, Expr):
                changes[field] = self.expr(value, prefix, s)
            elif isinstance(value, tuple) and value and all(isinstance(v, Expr) for v in value):
                changes[field] = tuple(self.expr(v, prefix, s) for v in value)
        return prefix + [s.replace(**changes)]

    def splice_iter_inits(self, s: For | While, prefix: list[Stmt]) -> For | While:
        """`s` with inline calls in its iter args' initial values spliced before it."""
        fresh: dict[Var, Expr] = {}
        for a in s.iter_args:
            init = self.expr(a.init, prefix, s)
            if init is not a.init:
                fresh[a] = a.replace(init=init)
        if not fresh:
            return s
        rewriter = VarRewriter(fresh)
        changes = {"iter_args": tuple(fresh.get(a, a) for a in s.iter_args), "body": rewriter.stmt(s.body)}
        if isinstance(s, While):
            changes["cond"] = rewriter.expr(s.cond)
        return s.replace(**changes)

    def expr(self, e: Expr, prefix: list[Stmt], at: Stmt) -> Expr:
        """`e` with inline calls replaced by their results, their bodies appended to `prefix`."""
        rewriter = _CallRewriter(self, prefix, at)
        return rewriter.expr(e)

    def splice(self, call: Call, prefix: list[Stmt], at: Stmt) -> Expr:
        callee = _inline_callee(call, self.program)
        mapping: dict[Var, Expr] = {}
        rebound = set(defined_vars(callee.body))
        for param, arg in zip(callee.params, call.args):
            if isinstance(arg, ATOMS) and param not in rebound:
                mapping[param] = arg
            else:
                bound = Var(param.name, param.type, at.span)
                prefix.append(Assign(bound, arg, at.span))
                mapping[param] = bound
        mapping.update(_dim_bindings(callee, call))
        stmts = flatten(rename_locals(callee.body, mapping))
        ret = stmts.pop() if stmts and isinstance(stmts[-1], Return) else None
        early = next((s for s in stmts for x in walk_stmts(s) if isinstance(x, Return)), None)
        if early is not None:
            raise PassError(f"inline function '{callee.name}' returns from inside control flow; "
                            "an inline function may only return at its end", early.span, "InlineFunctions")
        prefix.extend(stmts)
        values = ret.values if ret is not None else ()
        return values[0] if len(values) == 1 else MakeTuple(values, call.span)


def _dim_bindings(callee: Function, call: Call) -> dict[Var, Expr]:
    """Each dynamic dim of the callee's parameter shapes -> the argument's dim at this call
    site, so the spliced body is typed with the caller's concrete shapes."""
    out: dict[Var, Expr] = {}
    for param, arg in zip(callee.params, call.args):
        pt, at = param.type, arg.type
        if not (isinstance(pt, ShapedType) and isinstance(at, ShapedType) and pt.rank == at.rank):
            continue
        for dim, actual in zip(pt.shape, at.shape):
            if not isinstance(dim, Var):
                continue
            bound = out.setdefault(dim, actual)
            if bound is not actual and not dims_equal(bound, actual):
                raise PassError(f"inline function '{callee.name}' is called with dim {dim.name} = "
                                f"{format_shape((bound,))[1:-1]} and {format_shape((actual,))[1:-1]} "
                                f"(parameter '{param.name}')", call.span, "InlineFunctions")
    return out


class _CallRewriter(VarRewriter):
    """Post-order replacement of inline calls inside an expression."""

    def __init__(self, splicer: _Splicer, prefix: list[Stmt], at: Stmt) -> None:
        super().__init__()
        self.splicer, self.prefix, self.at = splicer, prefix, at

    def expr(self, e: Expr) -> Expr:
        e = super().expr(e)
        if isinstance(e, Call) and _inline_callee(e, self.splicer.program):
            return self.splicer.splice(e, self.prefix, self.at)
        return e

