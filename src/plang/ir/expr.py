"""IR expressions: variables, constants, scalar arithmetic, calls and tuples."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..dtypes import BOOL, FP32, INDEX, DataType
from .node import Node, node
from .span import Span
from .types import ScalarType, TupleType, Type, UnknownType, register_dim_classes

if TYPE_CHECKING:
    from .ops.registry import Op


class Expr(Node):
    """Base of all expressions; every expression has a `type` (a field where the
    subclass declares it, else derived by its constructor)."""

    __slots__ = ("type",)


@node
class Var(Expr):
    """A named value. Identity matters: two Vars with one name are different variables."""

    name: str
    type: Type


@node
class IterArg(Var):
    """A loop-carried variable with its initial value (`init_values=` of a loop)."""

    init: Expr


@node
class GlobalVar(Expr):
    """A reference to a function of the enclosing program, by name."""

    name: str

    def __init__(self, name: str, span: Span | None = None) -> None:
        self._set(span, name=name, type=UnknownType())


@node
class ConstInt(Expr):
    value: int
    type: ScalarType

    def __init__(self, value: int, dtype: DataType = INDEX, span: Span | None = None) -> None:
        self._set(span, value=int(value), type=ScalarType(dtype))

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


register_dim_classes(Expr, ConstInt)


@node
class ConstFloat(Expr):
    value: float
    type: ScalarType

    def __init__(self, value: float, dtype: DataType = FP32, span: Span | None = None) -> None:
        self._set(span, value=float(value), type=ScalarType(dtype))

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


@node
class ConstBool(Expr):
    value: bool

    def __init__(self, value: bool, span: Span | None = None) -> None:
        self._set(span, value=bool(value), type=ScalarType(BOOL))


@node
class BinaryExpr(Expr):
    """Scalar binary arithmetic / comparison / logic. `symbol` is the Python operator."""

    lhs: Expr
    rhs: Expr
    type: ScalarType
    _rederived = ("type",)
    symbol = ""
    is_comparison = False

    def __init__(self, lhs: Expr, rhs: Expr, dtype: DataType | None = None,
                 span: Span | None = None) -> None:
        if dtype is None:
            dtype = BOOL if self.is_comparison or self.symbol in ("and", "or") else _result_dtype(lhs, rhs)
        self._set(span, lhs=lhs, rhs=rhs, type=ScalarType(dtype))

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


def _result_dtype(lhs: Expr, rhs: Expr) -> DataType:
    """Arithmetic on two scalars: a float operand wins over an integer one; between two
    floats or two sized integers the wider dtype wins (INT32 + INT64 -> INT64); otherwise (a
    tie, an INDEX operand) the left one."""
    dl, dr = _scalar_dtype(lhs), _scalar_dtype(rhs)
    if dl.is_float != dr.is_float:
        return dl if dl.is_float else dr
    return dr if dr.bits > dl.bits and dl.kind == dr.kind else dl


def _scalar_dtype(e: Expr) -> DataType:
    t = e.type
    if not isinstance(t, ScalarType):
        raise TypeError(f"scalar arithmetic needs scalar operands, got {type(t).__name__}")
    return t.dtype


def _binary(name: str, symbol: str, comparison: bool = False) -> type[BinaryExpr]:
    return type(name, (BinaryExpr,), {"__slots__": (), "symbol": symbol, "is_comparison": comparison})


Add = _binary("Add", "+")
Sub = _binary("Sub", "-")
Mul = _binary("Mul", "*")
Div = _binary("Div", "/")
FloorDiv = _binary("FloorDiv", "//")
FloorMod = _binary("FloorMod", "%")
Pow = _binary("Pow", "**")
Min = _binary("Min", "min")
Max = _binary("Max", "max")
Eq = _binary("Eq", "==", True)
Ne = _binary("Ne", "!=", True)
Lt = _binary("Lt", "<", True)
Le = _binary("Le", "<=", True)
Gt = _binary("Gt", ">", True)
Ge = _binary("Ge", ">=", True)
And = _binary("And", "and")
Or = _binary("Or", "or")

BINARY_OPS: tuple[type[BinaryExpr], ...] = (
    Add, Sub, Mul, Div, FloorDiv, FloorMod, Pow, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, And, Or)


@node
class UnaryExpr(Expr):
    operand: Expr
    type: ScalarType
    symbol = ""

    def __init__(self, operand: Expr, span: Span | None = None) -> None:
        dtype = BOOL if self.symbol == "not" else _scalar_dtype(operand)
        self._set(span, operand=operand, type=ScalarType(dtype))


class Neg(UnaryExpr):
    __slots__ = ()
    symbol = "-"


class Not(UnaryExpr):
    __slots__ = ()
    symbol = "not"


@node
class Cast(Expr):
    """Scalar conversion to `dtype`."""

    operand: Expr
    type: ScalarType

    def __init__(self, operand: Expr, dtype: DataType, span: Span | None = None) -> None:
        self._set(span, operand=operand, type=ScalarType(dtype))

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


@node
class Call(Expr):
    """Application of a registered op or of a program function (`GlobalVar`).

    `args` are expressions; `kwargs` hold static attributes (ints, floats, bools, strings,
    dtypes, enums, or expressions/tuples of them).
    """

    op: Op | GlobalVar
    args: tuple[Expr, ...]
    kwargs: Mapping[str, Any] | None
    type: Type

    @property
    def op_name(self) -> str:
        return self.op.name


@node
class MakeTuple(Expr):
    elements: tuple[Expr, ...]

    def __init__(self, elements: Sequence[Expr], span: Span | None = None) -> None:
        els = tuple(elements)
        self._set(span, elements=els, type=TupleType([e.type for e in els]))


@node
class TupleGetItem(Expr):
    tuple: Expr
    index: int

    def __init__(self, tuple_: Expr, index: int, span: Span | None = None) -> None:
        tt = tuple_.type
        if not isinstance(tt, TupleType):
            raise TypeError(f"cannot index a non-tuple value of type {type(tt).__name__}")
        if not -len(tt.types) <= index < len(tt.types):
            raise IndexError(f"tuple index {index} out of range for a {len(tt.types)}-tuple")
        self._set(span, tuple=tuple_, index=index, type=tt.types[index])
