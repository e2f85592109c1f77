"""OutlineClusterScopes: `pl.cluster()` becomes a Group function, a standalone `pl.spmd`
an Spmd function.

A Group function co-schedules the kernels its body calls on one core group. An `pl.spmd`
nested in a cluster is unwrapped into the Group function, whose attrs then carry its
`core_num` / `sync_start`. A standalone `pl.spmd` becomes an Spmd function carrying
`core_num` / `sync_start`; its dispatch metadata (`deps`, `predicate`,
`allow_early_resolve`, `as tid`) moves to the call, as for InCore scopes.
"""

from __future__ import annotations

from typing import Any

from ..dtypes import TASK_ID
from ..ir.enums import FunctionType, ScopeKind
from ..ir.expr import Var
from ..ir.function import Function, Program
from ..ir.stmt import For, If, Scope, SeqStmts, Stmt, While, seq
from ..ir.types import ScalarType
from .analysis.outliner import global_dims, outline, unique_name, use_counts
from .analysis.var_uses import walk_stmts
from .diagnostics import PassError
from .framework import Pass, register_pass
from .properties import register_property

LAUNCH_ATTRS = ("core_num", "sync_start")
CALL_KWARGS = ("deps", "predicate", "allow_early_resolve", "dumps")


def _is_cluster_or_spmd(s: Stmt) -> bool:
    return isinstance(s, Scope) and s.kind in (ScopeKind.Cluster, ScopeKind.Spmd)


@register_pass
class OutlineClusterScopes(Pass):
    name = "OutlineClusterScopes"
    required = frozenset({"SplitIncoreOrch"})
    produced = frozenset({"ClusterOutlined"})

    def run(self, program: Program) -> Program:
        taken = set(program.functions)
        out: list[Function] = []
        changed = False
        for fn in program.functions.values():
            if not any(_is_cluster_or_spmd(s) for s in walk_stmts(fn.body)):
                out.append(fn)
                continue
            outliner = _Outliner(fn, program, taken)
            body = outliner.stmt(fn.body)
            out.extend(outliner.created)
            out.append(fn.replace(body=body))
            changed = True
        return program.with_functions(out) if changed else program


class _Outliner:
    def __init__(self, fn: Function, program: Program, taken: set[str]) -> None:
        self.fn, self.taken = fn, taken
        self.functions = dict(program.functions)
        self.counts = use_counts(fn.body)
        self.exclude = global_dims(fn)
        self.created: list[Function] = []
        self.k = {"group": 0, "spmd": 0}

    def name(self, attrs: Any, kind: str) -> str:
        hint = attrs.get("name_hint")
        if hint:
            return unique_name(str(hint), self.taken)
        name = unique_name(f"{self.fn.name}_{kind}_{self.k[kind]}", self.taken)
        self.k[kind] += 1
        return name

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, SeqStmts):
            return seq([self.stmt(x) for x in s.stmts], s.span)
        if isinstance(s, Scope) and s.kind is ScopeKind.Cluster:
            return self.cluster(s)
        if isinstance(s, Scope) and s.kind is ScopeKind.Spmd:
            return self.spmd(s)
        if isinstance(s, If):
            return s.replace(then_body=self.stmt(s.then_body),
                             else_body=None if s.else_body is None else self.stmt(s.else_body))
        if isinstance(s, (For, While, Scope)):
            return s.replace(body=self.stmt(s.body))
        return s

    def cluster(self, s: Scope) -> Stmt:
        launch: dict[str, Any] = {}
        body = _unwrap_spmd(s.body, launch)
        return self.emit(body, s, FunctionType.Group, self.name(s.attrs, "group"), launch, s.body)

    def spmd(self, s: Scope) -> Stmt:
        launch = {k: s.attrs[k] for k in LAUNCH_ATTRS if k in s.attrs}
        return self.emit(s.body, s, FunctionType.Spmd, self.name(s.attrs, "spmd"), launch, s.body)

    def emit(self, body: Stmt, s: Scope, ftype: FunctionType, name: str, fn_attrs: dict[str, Any],
             original: Stmt) -> Stmt:
        kwargs = {k: s.attrs[k] for k in CALL_KWARGS if k in s.attrs}
        extra: list[Var] = []
        if s.task_var is not None or any(k != "dumps" for k in kwargs):
            kwargs = {"submit": True, **kwargs}
            extra.append(s.task_var if s.task_var is not None else Var("tid", ScalarType(TASK_ID), s.span))
        out = outline(body, name=name, outer_uses=self.counts, region_uses=use_counts(original),
                      exclude=self.exclude, functions=self.functions, func_type=ftype,
                      attrs=fn_attrs, call_kwargs=kwargs, extra_results=extra, span=s.span)
        self.functions[name] = out.function
        self.created.append(out.function)
        return out.replacement


def _unwrap_spmd(s: Stmt, launch: dict[str, Any]) -> Stmt:
    """`s` with nested `pl.spmd` scopes replaced by their bodies; their launch attrs go
    to `launch`."""
    if isinstance(s, Scope) and s.kind is ScopeKind.Spmd:
        for k in LAUNCH_ATTRS:
            if k in s.attrs:
                launch[k] = s.attrs[k]
        bad = [k for k in ("deps", "predicate", "allow_early_resolve") if k in s.attrs] + \
            (["as tid"] if s.task_var is not None else [])
        if bad:
            raise PassError(f"pl.spmd nested in pl.cluster() cannot take {', '.join(bad)}: it is "
                            f"unwrapped into the Group function and never dispatched on its own", s.span)
        return _unwrap_spmd(s.body, launch)
    if isinstance(s, SeqStmts):
        return seq([_unwrap_spmd(x, launch) for x in s.stmts], s.span)
    return s


def check_cluster_outlined(program: Program) -> None:
    for fn in program.functions.values():
        for s in walk_stmts(fn.body):
            if _is_cluster_or_spmd(s):
                raise PassError(f"{s.kind.value} scope in function {fn.name!r} has not been outlined",
                                s.span)


register_property("ClusterOutlined", check_cluster_outlined,
                  "no `pl.cluster()` / `pl.spmd` scope is left inline")
