"""`Body`: the bookkeeping of one function body while it is parsed: the open blocks and their
yield slots, the enclosing scopes, loop depth, returns, function attributes and dump tags."""

from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import Any, Iterator

from ...ir.enums import FunctionType
from ...ir.expr import Expr, Var
from ...ir.stmt import Stmt
from ...ir.types import Type


class YieldSlot:
    """Collects the `pl.yield_` of a loop / branch body: values and target names."""

    __slots__ = ("values", "targets", "node")

    def __init__(self) -> None:
        self.values: list[Expr] | None = None
        self.targets: list[tuple[str, Type | None, ast.AST]] = []
        self.node: ast.AST | None = None


class Body:
    """State of the function body being parsed, one per function (an `@pl.inline` expansion
    swaps only the returns)."""

    def __init__(self, func_type: FunctionType = FunctionType.Opaque) -> None:
        self.func_type = func_type
        self.blocks: list[list[Stmt]] = []
        self.block_kinds: list[str] = []
        self.yield_slots: list[YieldSlot | None] = []
        self.scope_stack: list[tuple[str, Any, dict]] = []  # (construct name, ScopeKind, attrs)
        self.loop_kinds: list[str] = []  # the enclosing loops' constructs, innermost last
        self.prologue_open = True  # no statement but `pl.func_attr` / a docstring seen yet
        self.func_attrs: dict[str, Any] = {}
        self.dump_tags: list[Var] = []
        self.declared_returns: list[Type] | None = None
        self.seen_returns: list[Type] | None = None
        self.inline_stack: list[str] = []
        self.external_callees: dict[str, tuple[Any, Any]] = {}  # name -> (module-level Function, call)

    def emit(self, stmt: Stmt) -> None:
        self.blocks[-1].append(stmt)

    def open_block(self, kind: str, slot: YieldSlot | None) -> None:
        self.blocks.append([])
        self.block_kinds.append(kind)
        self.yield_slots.append(slot)

    def close_block(self) -> list[Stmt]:
        self.yield_slots.pop()
        self.block_kinds.pop()
        return self.blocks.pop()

    @property
    def current_slot(self) -> YieldSlot | None:
        return self.yield_slots[-1] if self.yield_slots else None

    @contextmanager
    def inline(self, name: str) -> Iterator[None]:
        """The body of `@pl.inline` helper `name`: its returns are its own."""
        outer = self.declared_returns, self.seen_returns
        self.inline_stack.append(name)
        self.declared_returns, self.seen_returns = None, None
        try:
            yield
        finally:
            self.inline_stack.pop()
            self.declared_returns, self.seen_returns = outer
