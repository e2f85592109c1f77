"""`with` scopes: `pl.at`, `pl.cluster`, `pl.spmd`, `pl.scope` / `pl.manual_scope`, `pl.graph`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from ...dtypes import TASK_ID
from ...errors import ParserSyntaxError, UnsupportedConstructError
from ...ir.enums import Level, Role, ScopeKind, ScopeMode
from ...ir.expr import Var
from ...ir.stmt import Scope
from ...ir.types import ScalarType
from .loops import LoopParser, given

OUTLINED_SCOPES = (ScopeKind.InCore, ScopeKind.Cluster, ScopeKind.Spmd, ScopeKind.Hierarchy)
"""Scopes the passes outline into functions of their own: no return, break or continue
crosses them."""

if TYPE_CHECKING:
    from .statements import StatementParser

_TASK_SCOPES = (ScopeKind.InCore, ScopeKind.Hierarchy, ScopeKind.Spmd)


class ScopeParser:
    """`with` statements: one DSL scope each (attributes checked, nesting rules enforced)."""

    def __init__(self, stmts: StatementParser, loops: LoopParser) -> None:
        self.stmts, self.loops, self.body = stmts, loops, stmts.body
        self.source, self.names, self.calls = stmts.source, stmts.names, stmts.exprs.calls

    def stmt_With(self, node: ast.With) -> None:
        if len(node.items) != 1:
            raise self.source.error(
                UnsupportedConstructError, "one scope per `with` statement", node.items[1].context_expr
            )
        item = node.items[0]
        found = self.loops.construct_call(item.context_expr, ("scope", "spmd"))
        if found is None:
            raise self.source.error(
                UnsupportedConstructError,
                f"`with {ast.unparse(item.context_expr)}` is not a DSL scope",
                item.context_expr,
                hint="use pl.at / pl.cluster / pl.spmd / pl.scope / pl.manual_scope / pl.graph",
            )
        fn, args, kwargs = found
        call = item.context_expr
        kind, attrs = self.scope_kind_attrs(fn, args, kwargs, call)
        self.check_nesting(fn.__name__, kind, attrs, call)
        task_var = None
        if item.optional_vars is not None:
            if kind not in _TASK_SCOPES or not isinstance(item.optional_vars, ast.Name):
                raise self.source.error(
                    ParserSyntaxError,
                    "`as <name>` is only valid on pl.at / pl.spmd scopes",
                    item.optional_vars,
                )
            task_var = Var(item.optional_vars.id, ScalarType(TASK_ID), self.source.span(item.optional_vars))
        self.body.scope_stack.append((fn.__name__, kind, attrs))
        outlined = kind in OUTLINED_SCOPES
        if outlined:  # a break / continue cannot leave the function the scope becomes
            self.body.loop_kinds.append(f"scope:pl.{fn.__name__}")
        try:
            slot = self.body.current_slot  # scopes are transparent to yields
            body = self.stmts.parse_block(node.body, kind.name, slot, new_frame=False)
        finally:
            self.body.scope_stack.pop()
            if outlined:
                self.body.loop_kinds.pop()
        self.body.emit(Scope(kind, body, attrs, task_var=task_var, span=self.source.span(node)))
        if task_var is not None:
            self.names.declare(task_var.name, task_var, item.optional_vars)

    def scope_kind_attrs(self, fn: Any, args: list, kwargs: dict, call: ast.Call) -> tuple[ScopeKind, dict]:
        name = fn.__name__
        if name == "spmd":
            return ScopeKind.Spmd, self.loops.spmd_attrs(fn, args, kwargs, call)
        b = self.loops.bind_args(fn, args, kwargs, call)
        if name == "at":
            return self.at_attrs(b, call)
        if name == "cluster":
            return ScopeKind.Cluster, self.name_hint_attr(b, call)
        if name == "graph":
            gname = b.get("name")
            if not isinstance(gname, str) or not gname.isidentifier():
                raise self.source.error(
                    ParserSyntaxError, f"pl.graph needs an identifier name, got {gname!r}", call
                )
            return ScopeKind.Graph, {"name": gname}
        if name == "manual_scope":
            return ScopeKind.Runtime, {"mode": ScopeMode.MANUAL}
        if name == "fused":
            rows = b.get("rows")
            if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool) or rows < 1):
                raise self.source.error(
                    ParserSyntaxError, f"pl.fused rows= takes a positive int, got {rows!r}", call
                )
            return ScopeKind.Fused, {} if rows is None else {"rows": rows}
        mode = b.get("mode") or ScopeMode.AUTO
        if not isinstance(mode, ScopeMode):
            raise self.source.error(
                ParserSyntaxError, f"pl.scope mode= takes a pl.ScopeMode, got {mode!r}", call
            )
        return ScopeKind.Runtime, {"mode": mode}

    def name_hint_attr(self, b: dict, call: ast.Call) -> dict[str, Any]:
        hint = b.get("name_hint", "")
        if not isinstance(hint, str) or (hint and not hint.isidentifier()):
            raise self.source.error(
                ParserSyntaxError, f"name_hint must be an identifier string, got {hint!r}", call
            )
        return {"name_hint": hint} if hint else {}

    def at_attrs(self, b: dict, call: ast.Call) -> tuple[ScopeKind, dict]:
        level = b.get("level")
        if not isinstance(level, Level):
            raise self.source.error(ParserSyntaxError, f"pl.at needs level=pl.Level.<X>, got {level!r}", call)
        kind = ScopeKind.InCore if level is Level.CORE_GROUP else ScopeKind.Hierarchy
        attrs: dict[str, Any] = {"level": level}
        role = b.get("role")
        if role is not None:
            if not isinstance(role, Role):
                raise self.source.error(ParserSyntaxError, f"pl.at role= takes a pl.Role, got {role!r}", call)
            if role is Role.SubWorker and level.value >= Level.HOST.value:  # as the reference
                raise self.source.error(
                    UnsupportedConstructError,
                    "Inline 'with pl.at(level>=HOST, role=pl.Role.SubWorker)' is not supported", call,
                    hint="declare a SubWorker via @pl.function(level=..., role=pl.Role.SubWorker): its "
                         "body is Python the run executes as written")
            attrs["role"] = role
        attrs.update(self.loops.optimization_attrs(b.get("optimizations"), call))
        for key in ("deps", "no_dep_args", "dumps", "allow_early_resolve", "predicate", "cache_policies"):
            if given(b.get(key)):
                attrs[key] = self.calls.scope_attr_value(key, b[key], call)
        attrs.update(self.name_hint_attr(b, call))
        if b.get("windowize"):
            attrs["windowize"] = self.calls.scope_attr_value("windowize", b["windowize"], call)
        if "predicate" in attrs and kind is not ScopeKind.InCore:
            raise self.source.error(
                ParserSyntaxError, "predicate= is only valid with level=pl.Level.CORE_GROUP", call
            )
        return kind, attrs

    def check_nesting(self, name: str, kind: ScopeKind, attrs: dict, call: ast.Call) -> None:
        outer = [k for _, k, _ in self.body.scope_stack]
        if kind is ScopeKind.Graph:
            if self.body.func_type.is_core or self.body.func_type.name in ("Group", "Spmd"):
                raise self.source.error(
                    ParserSyntaxError, "pl.graph is not valid in a device-kernel body", call
                )
            if any(
                k in (ScopeKind.InCore, ScopeKind.Cluster, ScopeKind.Spmd, ScopeKind.Graph) for k in outer
            ):
                raise self.source.error(
                    ParserSyntaxError,
                    "pl.graph cannot be nested inside pl.at / pl.cluster / pl.spmd / pl.graph",
                    call,
                )
        if name == "manual_scope" or attrs.get("mode") is ScopeMode.MANUAL:
            if any(
                a.get("mode") is ScopeMode.MANUAL
                for _, k, a in self.body.scope_stack
                if k is ScopeKind.Runtime
            ):
                raise self.source.error(
                    ParserSyntaxError, "a manual scope cannot be nested in another manual scope", call
                )
        if "predicate" in attrs and any(
            k in (ScopeKind.InCore, ScopeKind.Cluster, ScopeKind.Spmd) for k in outer
        ):
            raise self.source.error(
                ParserSyntaxError,
                "predicate= is not valid on a scope nested in pl.at / pl.cluster / pl.spmd",
                call,
            )
