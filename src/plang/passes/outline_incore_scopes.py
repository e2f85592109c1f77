"""OutlineIncoreScopes: every core region of a host-side function becomes an InCore function.

Core regions: `with pl.at(level=CORE_GROUP)` scopes, top-level `for lane in
pl.split_aiv(...)` regions, and SPMD bodies that run inline (`for i in pl.spmd(n)` reading
`i`, or a `with pl.spmd(n)` body that reads the block index); an SPMD body that only calls
kernels is a dispatch body, left to OutlineClusterScopes. A core region calling a kernel is
an error (a kernel cannot launch a kernel). Each becomes a function named by its
`name_hint` or `<caller>_incore_<k>`; the caller, now an Orchestration function, gets the
call. Scope metadata the dispatch needs (`deps`, `no_dep_args`, `dumps`, `predicate`,
`allow_early_resolve`, and the `as tid` task id) moves to the call's kwargs; the scope's
`split` / `slot_num` optimizations become attributes of the new function. A nested
`pl.at(CORE_GROUP)` is already on the core and is spliced into its parent. Each new
function is checked against the `split_aiv` placement rules (AivSplitValid).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..dtypes import TASK_ID
from ..ir.enums import FunctionType, ScopeKind
from ..ir.expr import GlobalVar, Var
from ..ir.function import Function, Program
from ..ir.node import freeze_attrs
from ..ir.ops import make_call
from ..ir.stmt import Assign, For, If, Scope, SeqStmts, SplitAivScope, Stmt, While, flatten, seq
from ..ir.types import ScalarType
from .analysis.aiv_split_rules import check_aiv_split
from .analysis.outliner import Outlined, global_dims, outline, unique_name, use_counts
from .analysis.var_uses import calls_in, used_vars, walk_stmts
from .diagnostics import PassError
from .framework import Pass, register_pass
from .properties import register_property

CALL_KWARGS = ("deps", "no_dep_args", "dumps", "predicate", "allow_early_resolve")
SUBMIT_ONLY = ("deps", "predicate", "allow_early_resolve")
FUNCTION_ATTRS = ("split", "slot_num")


def is_core_region(s: Stmt) -> bool:
    """A statement OutlineIncoreScopes turns into an InCore function."""
    if isinstance(s, Scope) and s.kind is ScopeKind.InCore:
        return True
    if isinstance(s, SplitAivScope):
        return True
    return isinstance(s, Scope) and s.kind is ScopeKind.Spmd and spmd_body_is_inline(s)


def spmd_body_is_inline(s: Scope) -> bool:
    """A body that reads the block index itself (the loop form's index, or
    `pl.tile.get_block_idx()`); a body that only dispatches kernels
    (`for i in pl.spmd(n): y = self.kernel(x, y)` with `i` unused) is not."""
    if s.index_var is not None:
        dispatches = any(isinstance(c.op, GlobalVar) for c in calls_in(s.body))
        return s.index_var in used_vars(s.body) or not dispatches
    if any(isinstance(st, Scope) and st.kind is ScopeKind.InCore for st in flatten(s.body)):
        return False
    return any(not isinstance(c.op, GlobalVar) and c.op.name.endswith(".get_block_idx")
               for c in calls_in(s.body))


def splice_nested_incore(s: Stmt) -> Stmt:
    """`s` with nested `pl.at(CORE_GROUP)` scopes replaced by their bodies."""
    if isinstance(s, Scope) and s.kind is ScopeKind.InCore:
        return splice_nested_incore(s.body)
    if isinstance(s, SeqStmts):
        return seq([splice_nested_incore(x) for x in s.stmts], s.span)
    if isinstance(s, If):
        return s.replace(then_body=splice_nested_incore(s.then_body),
                         else_body=None if s.else_body is None else splice_nested_incore(s.else_body))
    if isinstance(s, (For, While, SplitAivScope)) or (isinstance(s, Scope)):
        return s.replace(body=splice_nested_incore(s.body))
    return s


class _FunctionOutliner:
    def __init__(self, fn: Function, program: Program, taken: set[str]) -> None:
        self.fn = fn
        self.functions = dict(program.functions)
        self.taken = taken
        self.counts: Counter[Var] = use_counts(fn.body)
        self.exclude = global_dims(fn)
        self.created: list[Function] = []
        self.k = 0

    def name(self, attrs: Any) -> str:
        hint = attrs.get("name_hint") if attrs else None
        if hint:
            return unique_name(str(hint), self.taken)
        name = unique_name(f"{self.fn.name}_incore_{self.k}", self.taken)
        self.k += 1
        return name

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, SeqStmts):
            return seq([self.stmt(x) for x in s.stmts], s.span)
        if isinstance(s, Scope) and s.kind is ScopeKind.InCore:
            return self.incore_scope(s)
        if isinstance(s, SplitAivScope):
            return self.emit(s, {}, None, s)
        if isinstance(s, Scope) and s.kind is ScopeKind.Spmd and spmd_body_is_inline(s):
            return self.spmd_scope(s)
        if isinstance(s, If):
            return s.replace(then_body=self.stmt(s.then_body),
                             else_body=None if s.else_body is None else self.stmt(s.else_body))
        if isinstance(s, (For, While, Scope)):
            return s.replace(body=self.stmt(s.body))
        return s

    def incore_scope(self, s: Scope) -> Stmt:
        return self.emit(splice_nested_incore(s.body), s.attrs, s.task_var, s)

    def spmd_scope(self, s: Scope) -> Stmt:
        prologue = []
        if s.index_var is not None:
            prologue.append(Assign(s.index_var, make_call("tile.get_block_idx", span=s.span), s.span))
        inner_attrs = {k: v for k, v in s.attrs.items() if k in FUNCTION_ATTRS}
        outer_attrs = {k: v for k, v in s.attrs.items() if k not in FUNCTION_ATTRS}
        call = self.emit(splice_nested_incore(s.body), inner_attrs, None, s, prologue)
        return s.replace(body=call, attrs=freeze_attrs(outer_attrs), index_var=None)

    def emit(self, region: Stmt, attrs: Any, task_var: Var | None, scope: Stmt,
             prologue: list[Stmt] | None = None) -> Stmt:
        attrs = dict(attrs or {})
        kwargs = {k: attrs[k] for k in CALL_KWARGS if k in attrs}
        extra: list[Var] = []
        if task_var is not None or any(k in kwargs for k in SUBMIT_ONLY):
            kwargs = {"submit": True, **kwargs}
            extra.append(task_var if task_var is not None else Var("tid", ScalarType(TASK_ID), scope.span))
        fn_attrs = {k: attrs[k] for k in FUNCTION_ATTRS if k in attrs}
        name = self.name(attrs)
        self.reject_kernel_calls(region, name)
        out: Outlined = outline(region, name=name, outer_uses=self.counts, exclude=self.exclude,
                                functions=self.functions, func_type=FunctionType.InCore,
                                attrs=fn_attrs, call_kwargs=kwargs, prologue=prologue or (),
                                extra_results=extra, span=scope.span)
        self.functions[name] = out.function
        self.created.append(out.function)
        return out.replacement

    def reject_kernel_calls(self, region: Stmt, name: str) -> None:
        """A core region becomes a kernel, and a kernel cannot launch another kernel."""
        for c in calls_in(region):
            callee = self.functions.get(c.op.name) if isinstance(c.op, GlobalVar) else None
            if callee is not None and callee.func_type.is_core:
                raise PassError(f"kernel {callee.name!r} is called inside a core region (which becomes "
                                f"kernel {name!r}), and a kernel cannot launch another kernel; call it "
                                f"outside the region, e.g. alone in a `with pl.spmd(n):` / `for i in "
                                f"pl.spmd(n):` body that does not read the block index (it is then "
                                f"dispatched on n blocks and reads pl.tile.get_block_idx() itself)",
                                c.span)


def host_side(fn: Function) -> bool:
    return not fn.func_type.is_core and fn.func_type not in (FunctionType.Group, FunctionType.Spmd)


@register_pass
class OutlineIncoreScopes(Pass):
    name = "OutlineIncoreScopes"
    required = frozenset({"SSAForm"})
    produced = frozenset({"SplitIncoreOrch"})

    def run(self, program: Program) -> Program:
        taken = set(program.functions)
        out: list[Function] = []
        changed = False
        for fn in program.functions.values():
            if not host_side(fn) or not any(is_core_region(s) for s in walk_stmts(fn.body)):
                out.append(fn)
                continue
            outliner = _FunctionOutliner(fn, program, taken)
            body = outliner.stmt(fn.body)
            ftype = FunctionType.Orchestration if fn.func_type is FunctionType.Opaque else fn.func_type
            for new in outliner.created:
                check_aiv_split(new, core=True)
            out.extend(outliner.created)
            out.append(fn.replace(body=body, func_type=ftype))
            changed = True
        return program.with_functions(out) if changed else program


def check_split_incore_orch(program: Program) -> None:
    """No core region is left in a host-side function."""
    for fn in program.functions.values():
        if not host_side(fn):
            continue
        for s in walk_stmts(fn.body):
            if is_core_region(s):
                what = "split_aiv region" if isinstance(s, SplitAivScope) else f"{s.kind.value} scope"
                raise PassError(f"{what} in function {fn.name!r} has not been outlined into an "
                                f"InCore function", s.span)


register_property("SplitIncoreOrch", check_split_incore_orch,
                  "core regions of host-side functions are outlined into InCore functions")

__all__ = ["OutlineIncoreScopes", "is_core_region"]
