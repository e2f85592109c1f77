"""`NameScopes`: what a name in a DSL body means (locals by block, then closure, globals and
the safe builtins) and how assignments bind it (non-SSA rebinding, strict SSA)."""

from __future__ import annotations

import ast
import builtins
import difflib
from contextlib import contextmanager
from typing import Any, Iterator

from ...errors import ParserNameError, SSAViolationError, UnsupportedConstructError
from ...ir.expr import IterArg, Var
from ...ir.types import TileType, Type
from ..values import MemRef, wrap
from .source import SourceTracker
from .types import same_type

SAFE_BUILTINS: dict[str, Any] = {
    n: getattr(builtins, n)
    for n in (
        "len",
        "min",
        "max",
        "abs",
        "int",
        "float",
        "bool",
        "tuple",
        "list",
        "True",
        "False",
        "None",
        "print",
        "isinstance",
        "str",
        "round",
        "sum",
        "divmod",
    )
}


def _named(value: Any, name: str) -> Any:
    """A `pl.MemRef()` declaration takes the name of the variable it is read through."""
    return value.named(name) if isinstance(value, MemRef) else value


def _memory_refined(old: Type, new: Type) -> bool:
    """`new` is `old`'s tile type with no memory space yet (InferTileMemorySpace places it):
    rebinding the name keeps the variable, e.g. `acc = pl.matmul_acc(acc, ...)` of an Acc tile."""
    return (isinstance(old, TileType) and isinstance(new, TileType) and new.memory_space is None
            and same_type(old, new.replace(memory_space=old.memory_space)))


class NameScopes:
    """Local frames (one per block), the closure and the globals of the function being parsed."""

    def __init__(
        self,
        source: SourceTracker,
        globals: dict[str, Any],
        closure: dict[str, Any],
        strict_ssa: bool = False,
    ) -> None:
        self.source, self.globals, self.closure, self.strict_ssa = source, globals, closure, strict_ssa
        self.env: list[dict[str, Any]] = [{}]
        self.block_locals: set[int] = set()  # ids of loop vars / iter args: visible in their body only

    # --- lookup ---------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Any:
        for frame in reversed(self.env):
            if name in frame:
                v = frame[name]
                return wrap(v) if isinstance(v, Var) else _named(v, name)
        for scope in (self.closure, self.globals):
            if name in scope:
                return _named(scope[name], name)
        if name in SAFE_BUILTINS:
            return SAFE_BUILTINS[name]
        if hasattr(builtins, name):
            raise self.source.error(
                UnsupportedConstructError,
                f"the Python builtin {name!r} is not supported in a DSL function",
                node,
                hint=f"use pl.{name}" if name in ("range", "min", "max", "abs") else "",
            )
        known = [n for f in self.env for n in f] + list(self.closure) + list(self.globals)
        close = difflib.get_close_matches(name, known, n=1)
        raise self.source.error(
            ParserNameError,
            f"name {name!r} is not defined",
            node,
            hint=f"did you mean {close[0]!r}?"
            if close
            else "define it in the function, or at module level before the DSL function",
        )

    def local_var(self, name: str) -> Var | None:
        for frame in reversed(self.env):
            if name in frame:
                v = frame[name]
                return v if isinstance(v, Var) else None
        return None

    # --- frames ---------------------------------------------------------------------------
    def push_frame(self) -> None:
        self.env.append({})

    def pop_frame(self, keep: bool = True) -> None:
        """Close a block; with `keep` its names (not its loop vars / iter args) stay visible."""
        frame = self.env.pop()
        if keep:
            self.env[-1].update({k: v for k, v in frame.items() if id(v) not in self.block_locals})

    @contextmanager
    def inline_body(
        self, globals: dict[str, Any], closure: dict[str, Any], params: dict[str, Any]
    ) -> Iterator[None]:
        """Resolve names as the body of an `@pl.inline` helper called with `params`."""
        outer = self.env, self.globals, self.closure
        self.env, self.globals, self.closure = [params], globals, closure
        try:
            yield
        finally:
            self.env, self.globals, self.closure = outer

    @contextmanager
    def closure_first(self, names: dict[str, Any]) -> Iterator[None]:
        """Let `names` (the scopes enclosing a live function) back the closure."""
        outer = self.closure
        self.closure = {**names, **outer}
        try:
            yield
        finally:
            self.closure = outer

    # --- binding --------------------------------------------------------------------------
    def bind_var(self, name: str, type_: Type, node: ast.AST) -> Var:
        """A Var for assigning `name`: the existing one when rebinding with the same type
        (non-SSA), else a new one. Strict SSA rejects a second assignment in the same block
        (a nested block may rebind a name of an enclosing one, as the reference allows)."""
        existing = self.local_var(name)
        if self.strict_ssa and name != "_" and isinstance(self.env[-1].get(name), Var):
            first = existing.span.begin_line
            raise self.source.error(
                SSAViolationError,
                f"variable {name!r} is assigned twice in a strict_ssa "
                f"function (first assigned at line {first})",
                node,
                hint="use a new name, or drop strict_ssa=True",
            )
        if (
            existing is not None
            and not self.strict_ssa
            and not isinstance(existing, IterArg)
            and id(existing) not in self.block_locals
            and (same_type(existing.type, type_) or _memory_refined(existing.type, type_))
        ):
            return existing
        var = Var(name, type_, self.source.span(node))
        self.env[-1][name] = var
        return var

    def bind_local(self, name: str, type_: Type, node: ast.AST, var: Var | None = None) -> Var:
        """A loop variable / iter arg: visible in its body only."""
        var = var or Var(name, type_, self.source.span(node))
        self.block_locals.add(id(var))
        self.env[-1][name] = var
        return var

    def declare(self, name: str, var: Var, node: ast.AST) -> None:
        """Bind a return var / task var produced by a compound statement."""
        if self.strict_ssa and isinstance(self.env[-1].get(name), Var):
            raise self.source.error(
                SSAViolationError, f"variable {name!r} is assigned twice in a strict_ssa function", node
            )
        self.env[-1][name] = var

    def set_value(self, name: str, value: Any) -> None:
        """Bind `name` in the innermost frame to a compile-time value or a Var."""
        self.env[-1][name] = value
