"""Types in the parser: the `TypeResolver` of annotations, exact type sameness and
annotation compatibility."""

from __future__ import annotations

import ast
import typing
from typing import TYPE_CHECKING, Any

from ...errors import ParserError
from ...ir.enums import TensorLayout
from ...ir.types import (
    ArrayType,
    AsyncHandleType,
    DistributedTensorType,
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Type,
    UnknownType,
    dim_value,
    shapes_equal,
)
from ..values import TypeSpec, annotation_spec

if TYPE_CHECKING:
    from .expressions import ExprEvaluator


class MultiReturn:
    """`-> tuple[T1, T2]`: several return types."""

    __slots__ = ("specs",)

    def __init__(self, specs: list[Any]) -> None:
        self.specs = specs


class TypeResolver:
    """Annotations as IR types: signature annotations (the live function's evaluated ones when
    it has them, else the AST evaluated against the enclosing scopes) and annotated assignments."""

    def __init__(
        self,
        exprs: ExprEvaluator,
        annotations: dict[str, Any] | None = None,
        annotation_scope: dict[str, Any] | None = None,
    ) -> None:
        self.exprs, self.source, self.names = exprs, exprs.source, exprs.names
        self.live = annotations or {}
        self.scope = annotation_scope or {}  # see `FunctionSource.annotation_scope`

    def annotation(self, node: ast.expr) -> Type:
        """The type of an annotated assignment's annotation."""
        spec = self.exprs.eval_static(node)
        try:
            return annotation_spec(spec).type
        except ParserError as e:
            raise self.source.locate(e, node) from None

    def parameter(self, name: str, node: ast.expr) -> TypeSpec:
        """Type and direction of parameter `name` annotated `node`."""
        value = self._signature_value(name, node)
        try:
            return annotation_spec(value)
        except ParserError as e:
            raise self.source.locate(e, node) from None

    def returns(self, fdef: ast.FunctionDef) -> list[Type] | None:
        """The declared return types (None when there is no `->`)."""
        node = fdef.returns
        if node is None:
            return None
        value = self._signature_value("return", node)
        if value is None:
            return []
        if typing.get_origin(value) is tuple:  # `tuple[...]` evaluated by Python at definition
            value = MultiReturn(list(typing.get_args(value)))
        specs = value.specs if isinstance(value, MultiReturn) else [value]
        try:
            return [annotation_spec(s).type for s in specs]
        except ParserError as e:
            raise self.source.locate(e, node) from None

    def _signature_value(self, name: str, node: ast.expr) -> Any:
        live = self.live.get(name)
        if live is not None and not isinstance(live, str):
            return live
        if not self.scope:
            return self.exprs.eval_static(node)
        with self.names.closure_first(self.scope):  # closure cells first, then the enclosing scopes
            return self.exprs.eval_static(node)


def same_type(a: Type, b: Type) -> bool:
    """Structurally identical types (dims compared by value / variable)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ScalarType):
        return a.dtype is b.dtype
    if isinstance(a, TensorType):
        return a.dtype is b.dtype and a.layout is b.layout and shapes_equal(a.shape, b.shape)
    if isinstance(a, TileType):
        return (
            a.dtype is b.dtype
            and a.memory_space is b.memory_space
            and shapes_equal(a.shape, b.shape)
            and _same_valid(a.valid_shape, b.valid_shape)
        )
    if isinstance(a, TupleType):
        return len(a.types) == len(b.types) and all(same_type(x, y) for x, y in zip(a.types, b.types))
    if isinstance(a, ArrayType):
        return a.extent == b.extent and a.dtype is b.dtype
    if isinstance(a, AsyncHandleType):
        return a.kind == b.kind
    return True


def _same_valid(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and shapes_equal(a, b))


def shapes_agree(ann, actual) -> bool:
    """An annotated shape agrees with a value's shape as in the reference: the same rank, and
    the same extent on every axis where both are static (a symbolic extent on either side,
    `M`, `M * 2`, agrees with anything)."""
    if len(ann) != len(actual):
        return False
    for a, b in zip(ann, actual):
        va, vb = dim_value(a), dim_value(b)
        if va is not None and vb is not None and va != vb:
            return False
    return True


def merge_annotation(ann: Type, actual: Type) -> Type | None:
    """The type a name annotated `ann` gets for a value of type `actual`, or None when they
    disagree. Dtypes must match and shapes agree (`shapes_agree`; where a symbolic extent
    meets another extent the value's shape is kept); details the annotation leaves out
    (memory space, valid shape, layout) come from the value."""
    if isinstance(actual, UnknownType):
        return ann  # an op whose result the annotation types (`t: pl.Tile[..] = pl.tpop_from_aic()`)
    if type(ann) is not type(actual) and not (type(ann) is TensorType
                                              and isinstance(actual, DistributedTensorType)):
        return None  # (a window-bound tensor is a tensor, as in the reference: it keeps its type)
    if isinstance(ann, ScalarType):
        return ann if ann.dtype is actual.dtype else None
    if isinstance(ann, TensorType):
        if ann.dtype is not actual.dtype or not shapes_agree(ann.shape, actual.shape):
            return None
        keep = ann if type(ann) is type(actual) and (ann.layout is not TensorLayout.ND
                                                     or actual.layout is TensorLayout.ND) else actual
        if not shapes_equal(ann.shape, actual.shape):
            keep = keep.replace(shape=actual.shape)
        return keep.replace(view=ann.view or actual.view, memref=ann.memref or actual.memref)
    if isinstance(ann, TileType):
        if ann.dtype is not actual.dtype or not shapes_agree(ann.shape, actual.shape):
            return None
        mem = ann.memory_space or actual.memory_space
        valid = ann.valid_shape if ann.valid_shape is not None else actual.valid_shape
        shape = ann.shape if shapes_equal(ann.shape, actual.shape) else actual.shape
        return TileType(shape, ann.dtype, mem, valid, ann.view or actual.view,
                        ann.memref or actual.memref)
    if isinstance(ann, TupleType):
        if len(ann.types) != len(actual.types):
            return None
        parts = [merge_annotation(a, b) for a, b in zip(ann.types, actual.types)]
        return None if any(p is None for p in parts) else TupleType(parts)  # type: ignore[arg-type]
    return ann if same_type(ann, actual) else None
