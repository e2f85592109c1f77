"""The source of one `@pl.jit*` function, read once: AST, namespace, params, dynamic dims."""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Mapping

from .. import pyast
from ..dtypes import DataType
from .signature import ParamSpec, is_dynvar, read_params


@dataclass(eq=False)
class FunctionSource:
    func: Callable
    filename: str
    first_line: int  # 1-based line of the first source line (decorator) in the file
    lines: list[str]  # dedented source lines
    fdef: ast.FunctionDef
    namespace: LiveNamespace
    params: list[ParamSpec]
    bound_dynamic: dict[str, dict[int, Any]] = field(default_factory=dict)
    body_dynvars: dict[str, str] = field(default_factory=dict)  # local name -> DynVar name
    text_hash: str = ""

    @property
    def name(self) -> str:
        return self.fdef.name

    @functools.cached_property
    def free_names(self) -> tuple[str, ...]:
        """Names the body reads but never binds (closure / global lookups), in first-use order."""
        bound = {p.name for p in self.params} | set(self.body_dynvars) | {"pl"}
        loads: dict[str, None] = {}
        for node in ast.walk(self.fdef):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    bound.add(node.id)
                else:
                    loads.setdefault(node.id)
        return tuple(n for n in loads if n not in bound)

    def orig_line(self, rel_line: int) -> int:
        """File line of 1-based line `rel_line` of the dedented source."""
        return self.first_line + rel_line - 1


class LiveNamespace(Mapping[str, Any]):
    """The names a function body sees (closure cells, then globals), read at lookup time so a
    rebound global or closure variable is seen by the next specialization."""

    def __init__(self, func: Callable) -> None:
        self._globals = func.__globals__
        self._cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))

    def __getitem__(self, name: str) -> Any:
        cell = self._cells.get(name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:
                raise KeyError(name) from None
        return self._globals[name]

    def __iter__(self):
        yield from self._cells
        yield from (k for k in self._globals if k not in self._cells)

    def __len__(self) -> int:
        return len(self._globals) + len(self._cells)


def read_source(func: Callable) -> FunctionSource:
    import hashlib

    try:
        raw, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise TypeError(f"@pl.jit needs the source of {func.__qualname__}: {e}") from None
    text = textwrap.dedent("".join(raw))
    module = pyast.parse(text)
    fdef = next(n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    namespace = LiveNamespace(func)
    filename = inspect.getsourcefile(func) or "<unknown>"
    src = FunctionSource(func, filename, first, text.splitlines(), fdef, namespace,
                         read_params(fdef, namespace, filename, first - 1),
                         text_hash=hashlib.sha256(text.encode()).hexdigest())
    _scan_dynamic(src)
    return src


def _scan_dynamic(src: FunctionSource) -> None:
    """Record `M = pl.dynamic("M")` and `x.bind_dynamic(axis, M)` statements of the body."""
    for stmt in ast.walk(src.fdef):
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and _is_call_to(stmt.value, "dynamic")):
            arg = stmt.value.args[0] if stmt.value.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                src.body_dynvars[stmt.targets[0].id] = arg.value
    for stmt in ast.walk(src.fdef):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "bind_dynamic" and isinstance(call.func.value, ast.Name)
                and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)):
            var = _dynvar_of(src, call.args[1])
            if var is None:
                raise TypeError(f"{src.filename}:{src.orig_line(call.lineno)}: bind_dynamic needs a "
                                f"pl.dynamic(...) variable as its second argument")
            src.bound_dynamic.setdefault(call.func.value.id, {})[int(call.args[0].value)] = var


def _dynvar_of(src: FunctionSource, node: ast.expr) -> Any:
    from ..language.values import DynVar

    if isinstance(node, ast.Name):
        if node.id in src.body_dynvars:
            return DynVar(src.body_dynvars[node.id])
        value = src.namespace.get(node.id)
        return value if is_dynvar(value) else None
    if _is_call_to(node, "dynamic") and node.args and isinstance(node.args[0], ast.Constant):
        return DynVar(node.args[0].value)
    return None


def _is_call_to(node: ast.expr, attr: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == attr)


def python_literal(value: Any) -> str | None:
    """Source text that re-creates a closure/global constant, or None if it is not one."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return repr(value)
    if isinstance(value, DataType):
        return repr(value)
    if isinstance(value, Enum):
        return f"pl.{type(value).__name__}.{value.name}"
    if is_dynvar(value):
        return f"pl.dynamic({value.name!r})"
    if isinstance(value, (tuple, list)):
        parts = [python_literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        body = ", ".join(parts) + ("," if isinstance(value, tuple) and len(parts) == 1 else "")
        return f"({body})" if isinstance(value, tuple) else f"[{body}]"
    return None
