"""Visitor and copy-on-write mutator base classes for passes and analyses.

Both dispatch `visit(node)` to the most specific `visit_<ClassName>` method along the
node's class hierarchy (`visit_Add`, then `visit_BinaryExpr`, then `visit_Expr`, ...), and
fall back to a generic walk over the node's `_fields` (including Call kwargs / attrs
values, tuples, and the shape expressions inside types).

Variables at binding sites (Assign targets, loop vars, iter args, return vars, params,
scope task / index vars, AIV lanes) go through `visit_def(var)`; every other occurrence is a
use and goes to `visit_Var`. Fields are walked in evaluation order (an Assign's value
before its target, a loop's bounds and initial values before its variables).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping

from .expr import IterArg, Var
from .function import Function, Program
from .node import Node, freeze_attrs
from .stmt import Assign, For, If, Scope, SeqStmts, SplitAivScope, Stmt, While
from .types import Type

_BODY_FIELDS = frozenset(("body", "then_body", "else_body"))
_DEF_FIELDS: dict[type, frozenset[str]] = {
    Assign: frozenset(("var",)),
    For: frozenset(("loop_var", "iter_args", "return_vars")),
    While: frozenset(("iter_args", "return_vars")),
    If: frozenset(("return_vars",)),
    Scope: frozenset(("task_var", "index_var")),
    SplitAivScope: frozenset(("lane_var",)),
    Function: frozenset(("params",)),
}
_FIELD_ORDER: dict[type, tuple[str, ...]] = {
    Assign: ("value", "var"),
    For: ("start", "stop", "step", "iter_args", "loop_var", "body", "return_vars", "kind", "attrs"),
    While: ("iter_args", "cond", "body", "return_vars"),
    Scope: ("kind", "attrs", "index_var", "body", "task_var"),
}
_NO_DEFS: frozenset[str] = frozenset()


_DEF, _BODY, _VALUE = "def", "body", "value"
_PLANS: dict[type, tuple[tuple[str, str], ...]] = {}


def _field_order(cls: type) -> tuple[str, ...]:
    return _FIELD_ORDER.get(cls, cls._fields)


def _plan(cls: type) -> tuple[tuple[str, str], ...]:
    """(field, kind) in walk order: a binding site, a statement body or any other value."""
    defs = _DEF_FIELDS.get(cls, _NO_DEFS)
    plan = _PLANS[cls] = tuple((f, _DEF if f in defs else _BODY if f in _BODY_FIELDS else _VALUE)
                               for f in _field_order(cls))
    return plan


class _Dispatch:
    """Per-subclass cache: node class -> the handler found along its MRO."""

    _table: dict[type, Callable[..., Any]]
    _generic = "generic_visit"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._table = {}

    def visit(self, node: Any) -> Any:
        """Dispatch to `visit_<Class>` (most specific first) or the generic walk."""
        table = type(self)._table
        handler = table.get(type(node))
        if handler is None:
            handler = table[type(node)] = self._resolve(type(node))
        return handler(self, node)

    @classmethod
    def _resolve(cls, node_cls: type) -> Callable[..., Any]:
        for klass in node_cls.__mro__:
            handler = getattr(cls, "visit_" + klass.__name__, None)
            if handler is not None:
                return handler
        return getattr(cls, cls._generic)


class IRVisitor(_Dispatch):
    """Read-only walk over IR. Override `visit_<Class>` hooks; call `self.generic_visit(node)`
    inside a hook to keep descending. Set `visit_types = False` to skip type annotations."""

    visit_types = True

    def visit_stmt(self, stmt: Stmt | None) -> None:
        """Visit a statement (None, an absent else-branch, is ignored)."""
        if stmt is not None:
            self.visit(stmt)

    def visit_expr(self, expr: Any) -> None:
        self.visit(expr)

    def visit_def(self, var: Var) -> None:
        """A Var at a binding site; by default visits an IterArg's init, then the Var."""
        if type(var) is IterArg:
            self.visit(var.init)
        self.visit(var)

    def visit_Var(self, var: Var) -> None:
        if self.visit_types:
            self.visit(var.type)

    def generic_visit(self, node: Node) -> None:
        cls = type(node)
        defs = _DEF_FIELDS.get(cls, _NO_DEFS)
        for f in _field_order(cls):
            value = getattr(node, f)
            if f in defs:
                for var in (value if isinstance(value, tuple) else (value,)):
                    if var is not None:
                        self.visit_def(var)
            else:
                self.visit_value(value)

    def visit_value(self, value: Any) -> None:
        """Visit the nodes inside a field value (a node, a tuple/list or a mapping of them)."""
        if isinstance(value, Node):
            if self.visit_types or not isinstance(value, Type):
                self.visit(value)
        elif isinstance(value, (tuple, list)):
            for v in value:
                self.visit_value(v)
        elif isinstance(value, Mapping):
            for v in value.values():
                self.visit_value(v)


class IRMutator(_Dispatch):
    """Copy-on-write rewriting. A hook returns the replacement node (the same object when
    unchanged); a statement hook may also return a `SeqStmts` (spliced into the enclosing
    list) or None (the statement is removed). A node is rebuilt via `.replace` only when a
    child changed, so untouched subtrees stay the same objects.

    Vars are identity-bearing leaves: a use maps through `mapping` (Var -> Expr). At a
    binding site (`visit_def`) a Var mapped to a Var becomes it; one whose type (or IterArg
    init) changes is rebuilt once and recorded in `mapping`, so that every later use
    follows. With `fresh=True` every binding becomes a new Var (how a body is cloned without
    two definitions sharing one Var). Set `mutate_types = False` to leave types alone.
    """

    _generic = "generic_mutate"
    mutate_types = True

    def __init__(self, mapping: Mapping[Var, Any] | None = None, fresh: bool = False) -> None:
        self.mapping: dict[Var, Any] = dict(mapping or {})
        self.fresh = fresh

    def visit_stmt(self, stmt: Stmt | None) -> Stmt | None:
        """Rewrite a statement (None, an absent else-branch, stays None)."""
        return None if stmt is None else self.visit(stmt)

    def visit_expr(self, expr: Any) -> Any:
        return self.visit(expr)

    def visit_Var(self, var: Var) -> Any:
        return self.mapping.get(var, var)

    def visit_def(self, var: Var) -> Var:
        return self.rebind(var, type(var) is IterArg)

    def rebind(self, var: Var, iter_arg: bool) -> Var:
        """The Var a binding of `var` binds now; `iter_arg=False` binds an IterArg as a plain
        Var (e.g. a loop-carried value becoming a parameter)."""
        mapped = self.mapping.get(var)
        if not self.fresh and not iter_arg and isinstance(mapped, Var):
            return mapped
        changes: dict[str, Any] = {}
        if iter_arg:
            init = self.visit(var.init)
            if init is not var.init:
                changes["init"] = init
        if self.mutate_types:
            t = self.visit(var.type)
            if t is not var.type:
                changes["type"] = t
        if not self.fresh:
            if iter_arg and isinstance(mapped, IterArg):
                return mapped if mapped.init is init else mapped.replace(init=init)
            if not changes:
                return var
        if iter_arg or type(var) is not IterArg:
            new = var.replace(**changes)  # a new Var even without changes
        else:
            new = Var(var.name, changes.get("type", var.type), var.span)
        self.mapping[var] = new
        return new

    def visit_SeqStmts(self, seq: SeqStmts) -> Stmt:
        out: list[Stmt] = []
        changed = False
        for s in seq.stmts:
            new = self.visit_stmt(s)
            if new is not s:
                changed = True
                if new is None:
                    continue
                if type(new) is SeqStmts:
                    out.extend(new.stmts)
                    continue
            out.append(new)
        return seq.replace(stmts=tuple(out)) if changed else seq

    def visit_Program(self, prog: Program) -> Program:
        old = list(prog.functions.values())
        new = [self.visit(f) for f in old]
        if all(a is b for a, b in zip(old, new)):
            return prog
        return Program(prog.name, [f for f in new if f is not None], prog.span)

    def generic_mutate(self, node: Node) -> Node:
        cls = type(node)
        plan = _PLANS.get(cls) or _plan(cls)
        changes: dict[str, Any] = {}
        for f, kind in plan:
            old = getattr(node, f)
            if kind is _DEF:
                new = self._mutate_defs(old)
            elif kind is _BODY:
                new = self.visit_stmt(old)
                if new is None and f != "else_body":
                    new = SeqStmts(())
            else:
                new = self.mutate_value(old)
            if new is not old:
                changes[f] = new
        return node.replace(**changes) if changes else node

    def mutate_value(self, value: Any) -> Any:
        """Rewrite the nodes inside a field value, rebuilding containers only on change."""
        if isinstance(value, Node):
            if self.mutate_types or not isinstance(value, Type):
                return self.visit(value)
            return value
        kind = type(value)
        if kind is tuple or kind is list:
            new = [self.mutate_value(v) for v in value]
            if all(a is b for a, b in zip(value, new)):
                return value
            return kind(new)
        if kind is MappingProxyType or kind is dict:
            new_map = {k: self.mutate_value(v) for k, v in value.items()}
            if all(new_map[k] is v for k, v in value.items()):
                return value
            return freeze_attrs(new_map)
        return value

    def _mutate_defs(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, tuple):
            new = tuple(self.visit_def(v) for v in value)
            return value if all(a is b for a, b in zip(value, new)) else new
        return self.visit_def(value)


def substitute(node: Any, mapping: Mapping[Var, Any]) -> Any:
    """`node` with every use of a Var in `mapping` replaced by its Expr (copy-on-write).

    Binding sites only follow Var -> Var entries; Var -> Expr entries rewrite uses only.
    """
    return IRMutator(mapping).visit(node)
