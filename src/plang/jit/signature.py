"""Reading a `@pl.jit` function's parameter annotations and binding call arguments to them.

An annotation is read from the function's AST (evaluating its pieces in the function's
namespace), never by executing the function: bare `pl.Tensor`, `pl.Tensor[[dims], dtype]`
(dims are ints or `pl.dynamic` variables), the same two forms of `pld.DistributedTensor`,
`pl.Out[...]` / `pl.InOut[...]`, `pl.Scalar[dtype]` or a bare dtype (`pl.FP32`, the
reference's spelling of a scalar parameter).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Mapping

from ..dtypes import DataType
from ..errors import JitSignatureError
from ..ir.enums import ParamDirection, TensorLayout
from ..ir.span import Span
from ..language.facade import facade
from ..pyast import compile_ast

Dim = Any  # int | DynVar | None (unknown until a call supplies it)


class RuntimeScalar:
    """`pl.RUNTIME`: leave a scalar parameter unspecialized (supplied at dispatch)."""

    _instance: RuntimeScalar | None = None

    def __new__(cls) -> RuntimeScalar:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "pl.RUNTIME"


RUNTIME = RuntimeScalar()


def is_dynvar(x: Any) -> bool:
    from ..language.values import DynVar

    return isinstance(x, DynVar)


@dataclass(frozen=True)
class ParamSpec:
    """What one parameter's annotation says. `dims`/`dtype` are None where left open."""

    name: str
    kind: str  # "tensor" | "scalar" | "tile"
    direction: ParamDirection
    dims: tuple[Dim, ...] | None
    dtype: DataType | None
    layout: TensorLayout = TensorLayout.ND
    default: Any = None
    lineno: int = 0
    text: str = ""  # the annotation as written (tiles are passed through unchanged)
    distributed: bool = False  # a window-bound pld.DistributedTensor

    @property
    def fully_annotated(self) -> bool:
        return self.kind != "tensor" or (self.dims is not None and self.dtype is not None)


def read_params(fdef: ast.FunctionDef, namespace: Mapping[str, Any], filename: str,
                line_offset: int) -> list[ParamSpec]:
    """ParamSpecs for every parameter of `fdef` (`self` excluded)."""
    specs: list[ParamSpec] = []
    args = fdef.args.args
    defaults = [None] * (len(args) - len(fdef.args.defaults)) + list(fdef.args.defaults)
    for a, d in zip(args, defaults):
        if a.arg == "self":
            continue
        line = a.lineno + line_offset
        if a.annotation is None:
            raise _error(filename, line, f"parameter {a.arg!r} of {fdef.name!r} needs an "
                            f"annotation such as pl.Tensor or pl.Scalar[pl.INT32]")
        default = _eval(d, namespace) if d is not None else None
        specs.append(_read(a.arg, a.annotation, namespace, filename, line, default))
    return specs


def _read(name: str, node: ast.expr, ns: Mapping[str, Any], filename: str, line: int,
          default: Any) -> ParamSpec:
    direction = ParamDirection.In
    head = _dotted(node.value if isinstance(node, ast.Subscript) else node)
    if isinstance(node, ast.Subscript) and head in ("pl.Out", "pl.InOut", "Out", "InOut"):
        direction = ParamDirection.InOut if head.endswith("InOut") else ParamDirection.Out
        node = node.slice
        head = _dotted(node.value if isinstance(node, ast.Subscript) else node)
    kind = head.rsplit(".", 1)[-1]
    if kind in ("Tensor", "DistributedTensor"):
        distributed = kind == "DistributedTensor"
        if not isinstance(node, ast.Subscript):
            return ParamSpec(name, "tensor", direction, None, None, default=default, lineno=line,
                             distributed=distributed)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape = _eval(parts[0], ns)
        dtype = _eval(parts[1], ns) if len(parts) > 1 else None
        layout = _eval(parts[2], ns) if len(parts) > 2 else TensorLayout.ND
        if not isinstance(shape, (list, tuple)) or not isinstance(dtype, DataType):
            spelling = "pld.DistributedTensor" if distributed else "pl.Tensor"
            raise _error(filename, line, f"parameter {name!r}: expected {spelling}[[dims], dtype]")
        return ParamSpec(name, "tensor", direction, tuple(shape), dtype, layout, default, line,
                         distributed=distributed)
    if kind == "Tile":
        if not isinstance(node, ast.Subscript):
            raise _error(filename, line, f"parameter {name!r}: a tile parameter needs its full type, "
                            f"e.g. pl.Tile[[64, 64], pl.FP32]")
        return ParamSpec(name, "tile", direction, None, None, default=default, lineno=line,
                         text=ast.unparse(node))
    if kind == "Scalar":
        dtype = _eval(node.slice, ns) if isinstance(node, ast.Subscript) else None
        return ParamSpec(name, "scalar", direction, None, dtype, default=default, lineno=line)
    alias = _eval_alias(node, ns)
    if isinstance(alias, DataType):  # a bare dtype, `scale: pl.FP32`, is pl.Scalar[pl.FP32]
        return ParamSpec(name, "scalar", direction, None, alias, default=default, lineno=line)
    if alias is not None:  # a name bound to an annotation, e.g. `T = pl.Tensor[[64, 64], pl.FP32]`
        return _from_type_spec(name, alias, direction, default, line)
    raise _error(filename, line, f"parameter {name!r}: @pl.jit parameters must be annotated "
                    f"pl.Tensor, pld.DistributedTensor, pl.Out[...], pl.InOut[...], pl.Scalar[...], a "
                    f"dtype such as pl.FP32 or (in @pl.jit.inline / @pl.jit.incore helpers) pl.Tile[...], "
                    f"got {ast.unparse(node)}")


def _eval_alias(node: ast.expr, ns: Mapping[str, Any]) -> Any:
    """The type spec or dtype an annotation names, else None."""
    from ..language.values import TypeSpec

    try:
        value = _eval(node, ns)
    except Exception:
        return None
    return value if isinstance(value, (TypeSpec, DataType)) else None


def _from_type_spec(name: str, spec: Any, direction: ParamDirection, default: Any, line: int) -> ParamSpec:
    from ..ir.printer import python_print
    from ..ir.types import DistributedTensorType, ScalarType, TensorType, TileType, dim_value
    from ..language.values import DynVar

    if spec.direction is not ParamDirection.In:
        direction = spec.direction
    t = spec.type
    if isinstance(t, TensorType):
        dims = tuple(dim_value(d) if dim_value(d) is not None else DynVar(d.name) for d in t.shape)
        return ParamSpec(name, "tensor", direction, dims, t.dtype, t.layout, default, line,
                         distributed=isinstance(t, DistributedTensorType))
    if isinstance(t, ScalarType):
        return ParamSpec(name, "scalar", direction, None, t.dtype, default=default, lineno=line)
    if isinstance(t, TileType):
        return ParamSpec(name, "tile", direction, None, None, default=default, lineno=line,
                         text=python_print(t))
    raise TypeError(f"parameter {name!r}: a @pl.jit parameter can not have type {python_print(t)}")


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _error(filename: str, line: int, message: str) -> JitSignatureError:
    return JitSignatureError(message, Span(filename, line))


def _eval(node: ast.expr, ns: Mapping[str, Any]) -> Any:
    code = compile_ast(ast.Expression(node), "<annotation>", "eval")
    return eval(code, {"__builtins__": {}}, {**ns, "pl": facade()})


def describe_dims(dims) -> str:
    return "[" + ", ".join(d.name if is_dynvar(d) else str(d) for d in dims) + "]"
