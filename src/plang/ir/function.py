"""`Function` and `Program`: the units the parser produces and the passes transform."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .enums import FunctionType, Level, ParamDirection, Role
from .expr import Var
from .node import Node, freeze_attrs, node
from .span import Span
from .stmt import Stmt
from .types import Type


@node
class Function(Node):
    name: str
    params: tuple[Var, ...]
    param_directions: tuple[ParamDirection, ...]
    return_types: tuple[Type, ...]
    body: Stmt
    func_type: FunctionType
    level: Level | None
    role: Role | None
    attrs: Mapping[str, Any]

    def __init__(self, name: str, params: Sequence[Var], param_directions: Sequence[ParamDirection] | None,
                 return_types: Sequence[Type], body: Stmt,
                 func_type: FunctionType = FunctionType.Opaque, level: Level | None = None,
                 role: Role | None = None, attrs: Mapping[str, Any] | None = None,
                 span: Span | None = None) -> None:
        params = tuple(params)
        dirs = tuple(param_directions) if param_directions is not None else (ParamDirection.In,) * len(params)
        if len(dirs) != len(params):
            raise ValueError(f"function {name!r}: {len(params)} params but {len(dirs)} directions")
        self._set(span, name=name, params=params, param_directions=dirs,
                  return_types=tuple(return_types), body=body, func_type=func_type,
                  level=level, role=role, attrs=freeze_attrs(attrs))

    @property
    def requires_runtime_binding(self) -> bool:
        """A HOST SubWorker declared with a `...` body: its implementation is a callback bound
        when the program is prepared."""
        return bool(self.attrs.get("requires_runtime_binding", False))


@node
class Program(Node):
    """An ordered collection of functions, keyed by name."""

    name: str
    functions: Mapping[str, Function]

    def __init__(self, name: str, functions: Mapping[str, Function] | Sequence[Function],
                 span: Span | None = None) -> None:
        if not isinstance(functions, Mapping):
            functions = {f.name: f for f in functions}
        for key, fn in functions.items():
            if key != fn.name:
                raise ValueError(f"program {name!r}: function stored as {key!r} is named {fn.name!r}")
        self._set(span, name=name, functions=freeze_attrs(functions))

    def get(self, name: str) -> Function:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"program {self.name!r} has no function {name!r}") from None

    def get_function(self, name: str) -> Function | None:
        """The function called `name`, else None."""
        return self.functions.get(name)

    def with_functions(self, functions: Sequence[Function]) -> Program:
        return Program(self.name, functions, self.span)
