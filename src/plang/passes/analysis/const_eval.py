"""Folding of scalar expressions whose operands are constants.

`fold(e)` returns a constant (`ConstInt` / `ConstFloat` / `ConstBool`) when `e` is a scalar
unary / binary / cast expression over constants, applies the identities `x+0`, `x-0`,
`x*1`, `x//1`, `x*0` (integers) and `TupleGetItem(MakeTuple(..), i)`, and otherwise
returns `e` unchanged. Only the top node is folded: callers fold bottom-up.
`const_int(e)` is the integer value of an integer expression that folds to a constant. An
integer result its dtype cannot hold is a `PassError` at the expression.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from ...dtypes import DataType
from ...ir.expr import (
    Add,
    And,
    BinaryExpr,
    Cast,
    ConstBool,
    ConstFloat,
    ConstInt,
    Div,
    Eq,
    Expr,
    FloorDiv,
    FloorMod,
    Ge,
    Gt,
    Le,
    Lt,
    MakeTuple,
    Max,
    Min,
    Mul,
    Ne,
    Not,
    Or,
    Pow,
    Sub,
    TupleGetItem,
    UnaryExpr,
)
from ...ir.types import ScalarType
from ..diagnostics import PassError

CONSTANTS = (ConstInt, ConstFloat, ConstBool)

_INT_OPS: dict[type, Callable[[Any, Any], Any]] = {
    Add: operator.add, Sub: operator.sub, Mul: operator.mul, FloorDiv: operator.floordiv,
    FloorMod: operator.mod, Min: min, Max: max, Eq: operator.eq, Ne: operator.ne, Lt: operator.lt,
    Le: operator.le, Gt: operator.gt, Ge: operator.ge, And: lambda a, b: bool(a and b),
    Or: lambda a, b: bool(a or b),
}
_FLOAT_OPS: dict[type, Callable[[Any, Any], Any]] = {
    **_INT_OPS, Div: operator.truediv, Pow: operator.pow, FloorDiv: lambda a, b: math.floor(a / b),
    FloorMod: math.fmod,
}


def const_value(e: Expr) -> int | float | bool | None:
    return e.value if isinstance(e, CONSTANTS) else None


def make_const(value: Any, dtype: DataType, span=None) -> Expr:
    """A constant of `dtype` holding `value` (floats rounded to the dtype's precision)."""
    if dtype.is_bool:
        return ConstBool(bool(value), span)
    if dtype.is_float:
        try:
            value = float(np.asarray(value, dtype=dtype.to_numpy()))
        except TypeError:
            value = float(value)
        return ConstFloat(value, dtype, span)
    return ConstInt(int(value), dtype, span)


def fold(e: Expr) -> Expr:
    if isinstance(e, BinaryExpr):
        return _fold_binary(e)
    if isinstance(e, UnaryExpr):
        v = const_value(e.operand)
        if v is None:
            return e
        return make_const(not v if isinstance(e, Not) else -v, e.type.dtype, e.span)
    if isinstance(e, Cast):
        v = const_value(e.operand)
        return e if v is None else make_const(v, e.type.dtype, e.span)
    if isinstance(e, TupleGetItem) and isinstance(e.tuple, MakeTuple):
        return e.tuple.elements[e.index]
    return e


def _fold_binary(e: BinaryExpr) -> Expr:
    a, b = const_value(e.lhs), const_value(e.rhs)
    dtype = e.type.dtype
    is_int = not any(isinstance(x, float) for x in (a, b) if x is not None) and not dtype.is_float
    if a is not None and b is not None:
        if is_int and isinstance(e, Pow) and b > 0 and abs(a) > 1 and b * math.log2(abs(a)) > dtype.bits:
            raise PassError(f"{a} ** {b} is out of the range of {dtype.name}", e.span)
        value = _evaluate(type(e), a, b, is_int)
        if value is not None and dtype.is_int and not dtype.holds(value):
            raise PassError(f"this integer expression evaluates to {value}, out of the range of "
                            f"{dtype.name}", e.span)
        return e if value is None else make_const(value, dtype, e.span)
    return _identity(e, a, b, is_int)


def _evaluate(kind: type, a: Any, b: Any, is_int: bool) -> Any:
    if kind in (FloorDiv, FloorMod, Div) and b == 0:
        return None
    if is_int:
        if kind is Div:
            return a // b if a % b == 0 else None
        if kind is Pow:
            return a ** b if b >= 0 else None
        fn = _INT_OPS.get(kind)
    else:
        fn = _FLOAT_OPS.get(kind)
    return None if fn is None else fn(a, b)


def _identity(e: BinaryExpr, a: Any, b: Any, is_int: bool) -> Expr:
    def keeps_dtype(x: Expr) -> bool:
        return isinstance(x.type, ScalarType) and x.type.dtype is e.type.dtype

    if b is not None and b == 0 and isinstance(e, (Add, Sub)) and keeps_dtype(e.lhs):
        return e.lhs
    if a is not None and a == 0 and isinstance(e, Add) and keeps_dtype(e.rhs):
        return e.rhs
    if b is not None and b == 1 and isinstance(e, (Mul, FloorDiv)) and keeps_dtype(e.lhs):
        return e.lhs
    if a is not None and a == 1 and isinstance(e, Mul) and keeps_dtype(e.rhs):
        return e.rhs
    if is_int and isinstance(e, Mul) and (a == 0 and a is not None or b == 0 and b is not None):
        return make_const(0, e.type.dtype, e.span)
    return e


def fold_tree(e: Expr) -> Expr:
    """Fold `e` bottom-up through scalar arithmetic (calls and tuples are left alone)."""
    if isinstance(e, BinaryExpr):
        lhs, rhs = fold_tree(e.lhs), fold_tree(e.rhs)
        if lhs is not e.lhs or rhs is not e.rhs:
            e = e.replace(lhs=lhs, rhs=rhs)
    elif isinstance(e, (UnaryExpr, Cast)):
        operand = fold_tree(e.operand)
        if operand is not e.operand:
            e = e.replace(operand=operand)
    return fold(e)


def const_int(e: Expr) -> int | None:
    v = const_value(fold_tree(e))
    return v if isinstance(v, int) and not isinstance(v, bool) else None
