"""Re-deducing op call types, and comparing types.

`deduce_call_type(call)` runs the op's type deduction on the call's current operands (so a
pass that changed operands can refresh the result type with `retype_call`); deduction
errors propagate as `OpTypeError` / `OpValueError`, except from `retype_call`, where they
are the user's (an operand became static and out of range) and raise a `PassError` at the
call. `types_equal(a, b)` is exact equality (dims compared structurally);
`types_compatible(declared, actual)` also lets a dynamic dim (a `Var`) stand for any extent
and an unset tile memory space match any space.
"""

from __future__ import annotations

from ...ir.expr import BinaryExpr, Call, ConstInt, Expr, Var
from ...ir.ops.registry import Op, OpTypeError, OpValueError, make_call
from ...ir.types import (
    ArrayType,
    DistributedTensorType,
    ScalarType,
    ShapedType,
    TensorType,
    TileType,
    TupleType,
    Type,
)
from ..diagnostics import PassError


def deduce_call_type(call: Call) -> Type:
    op: Op = call.op
    named = dict(zip((p.name for p in op.params if p.is_expr and p.required), call.args))
    named.update(call.kwargs)
    return make_call(op, (), named, call.span).type


def retype_call(call: Call) -> Call:
    """`call` with its type re-deduced (the same object when unchanged)."""
    try:
        t = deduce_call_type(call)
    except (OpTypeError, OpValueError) as e:
        raise PassError(str(e), call.span) from None
    return call if types_equal(t, call.type) else call.replace(type=t)


def dims_match(a: Expr, b: Expr) -> bool:
    if a is b:
        return True
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return a.value == b.value
    if isinstance(a, Var) and isinstance(b, Var):
        return a.name == b.name
    if isinstance(a, BinaryExpr) and type(a) is type(b):
        return dims_match(a.lhs, b.lhs) and dims_match(a.rhs, b.rhs)
    return False


def _shapes(a, b, compatible: bool) -> bool:
    if a is None or b is None:
        return a is None and b is None or compatible
    if len(a) != len(b):
        return False
    return all(dims_match(x, y) or compatible and (not isinstance(x, ConstInt) or not isinstance(y, ConstInt))
               for x, y in zip(a, b))


def _compare(a: Type, b: Type, compatible: bool) -> bool:
    if type(a) is not type(b) and not (compatible and type(a) is TensorType
                                       and isinstance(b, DistributedTensorType)):
        return False  # (a window-bound tensor is compatible with a declared tensor)
    if isinstance(a, ScalarType):
        return a.dtype is b.dtype
    if isinstance(a, ShapedType):
        if a.dtype is not b.dtype or not _shapes(a.shape, b.shape, compatible):
            return False
        if isinstance(a, TensorType):
            return a.layout is b.layout
        if isinstance(a, TileType):
            spaces = (a.memory_space, b.memory_space)
            spaces_ok = spaces[0] is spaces[1] or compatible and None in spaces
            return spaces_ok and _shapes(a.valid_shape, b.valid_shape, compatible)
        return True
    if isinstance(a, TupleType):
        return len(a.types) == len(b.types) and all(
            _compare(x, y, compatible) for x, y in zip(a.types, b.types))
    if isinstance(a, ArrayType):
        return a.extent == b.extent and a.dtype is b.dtype
    return True


def types_equal(a: Type, b: Type) -> bool:
    return _compare(a, b, compatible=False)


def types_compatible(declared: Type, actual: Type) -> bool:
    return _compare(declared, actual, compatible=True)
