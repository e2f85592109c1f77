"""How DSL values become IR: op calls through the registry, operators, subscripts.

Wrappers only work while the parser evaluates a DSL body; the parser makes its state the
active one (it knows the span of the call being evaluated and the function kind). The active
state is a context variable, so threads parsing different kernels at once never see each other's.
"""

from __future__ import annotations

import operator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Sequence

from ..dtypes import BOOL, FP32, INDEX, DataType
from ..errors import (
    EagerCallError,
    ParserNameError,
    ParserSyntaxError,
    ParserTypeError,
    raised_by_plang,
)
from ..ir import expr as E
from ..ir.enums import SplitMode
from ..ir.ops import REGISTRY, OpTypeError, OpValueError, make_call
from ..ir.span import NO_SPAN, Span
from ..ir.types import ScalarType, TensorType, TileType, describe_value
from . import values as _values
from .extents import constant_extent
from .indexing_forms import indexing_form
from .kernel_operands import kernel_tile_operands
from .values import DSLValue, Operators, Scalar, ShapedValue, Tensor, Tile, register_operators, wrap


class ParseState:
    """What wrappers read from the parser: the current span, the function kind and the
    mode of the innermost `pl.split_aiv` region being parsed (None outside every region)."""

    span: Span = NO_SPAN
    in_core_function: bool = False
    split_mode: SplitMode | None = None


_ACTIVE: ContextVar[ParseState | None] = ContextVar("plang_parse_state", default=None)


@contextmanager
def parsing(state: ParseState) -> Iterator[None]:
    """Make `state` the active parse state of this thread / task for the `with` body."""
    token = _ACTIVE.set(state)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def is_parsing() -> bool:
    return _ACTIVE.get() is not None


def active_state(what: str) -> ParseState:
    state = _ACTIVE.get()
    if state is None:
        raise EagerCallError(
            f"{what} only works inside a DSL function (@pl.function, @pl.program, @pl.jit): "
            "the parser reads the source and builds IR; it cannot run on concrete values"
        )
    return state


def current_span() -> Span:
    state = _ACTIVE.get()
    return NO_SPAN if state is None else state.span


# --- op calls ------------------------------------------------------------------------------


def _normalize_attr(v: Any) -> Any:
    if isinstance(v, DSLValue):
        return v.unwrap()
    if isinstance(v, (list, tuple)):
        return tuple(_normalize_attr(x) for x in v)
    return v


def call_op(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> DSLValue | tuple[DSLValue, ...]:
    """A typed call of registered op `name` (a tuple of calls for the compare form of gather),
    deduction errors raised as `ParserTypeError`."""
    state = active_state(f"pl.{name}")
    op = REGISTRY.get(name)
    if op is None:
        raise ParserNameError(f"op {name!r} is not registered")
    args = list(args)
    for i, p in enumerate(op.params[: len(args)]):
        if p.kind == "attr":
            args[i] = _normalize_attr(args[i])
    kwargs = {k: (_normalize_attr(v) if _is_attr(op, k) else v) for k, v in kwargs.items()}
    if isinstance(kwargs.get("attrs"), dict) and not _is_attr(op, "attrs"):  # call metadata
        kwargs["attrs"] = {k: _normalize_attr(v) for k, v in kwargs["attrs"].items()}
    if name in SPLIT_CROSSINGS:
        kwargs = _with_region_mode(state, op.short_name, kwargs, op.namespace)
    forms = [(op, args, kwargs)]
    if op.short_name in ("gather", "scatter", "scatter_update"):
        forms = indexing_form(op, args, kwargs)
    try:
        calls = [wrap(make_call(o, a, k, state.span)) for o, a, k in forms]
    except (OpTypeError, OpValueError) as e:
        raise ParserTypeError(str(e)) from None
    return calls[0] if len(calls) == 1 else tuple(calls)


SPLIT_CROSSINGS = frozenset({"tile.aiv_shard", "tile.aic_gather", "tensor.aiv_shard", "tensor.aic_gather"})
"""Ops whose split mode is inherited from the enclosing `pl.split_aiv` region."""


def _with_region_mode(state: ParseState, short: str, kwargs: dict[str, Any],
                      namespace: str = "tile") -> dict[str, Any]:
    """`pl.aiv_shard(x)` / `pl.aic_gather(x)`: the enclosing region's mode as the `mode` attr
    (an explicit `mode=` is accepted only when it repeats the region's). Outside every region
    the outlined form of a lowered kernel, `pl.tile.aiv_shard(t, split=1)`, carries the mode as
    its integer code."""
    if "split" in kwargs:
        if namespace != "tile":
            raise ParserSyntaxError(
                f"pl.{short}(..., split=N) is the outlined form of a lowered kernel and takes a tile",
                hint="wrap tensor code in a `for lane in pl.split_aiv(2, mode=...)` region instead",
            )
        return _outlined_crossing(state, short, kwargs)
    if "lane_stride" in kwargs:
        raise ParserSyntaxError(
            f"pl.{short} takes lane_stride= only in the outlined form pl.tile.{short}(t, split=N, ...)",
            hint="inside a pl.split_aiv region the partition follows the region's per-lane offsets",
        )
    if state.split_mode is None:
        raise ParserSyntaxError(
            f"pl.{short} is only valid inside a `for lane in pl.split_aiv(2, mode=...)` region: it names "
            "a crossing between the cube and the vector lanes and takes the region's split mode",
            hint="open a region with `for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):` "
            "(or LEFT_RIGHT / NONE) around the vector code that reads or produces this value",
        )
    given = kwargs.get("mode", state.split_mode)
    if given is not state.split_mode:
        raise ParserSyntaxError(
            f"pl.{short} takes its split mode from the enclosing pl.split_aiv region "
            f"({state.split_mode.name}), but mode={given!r} was passed",
            hint=f"write pl.{short}(x) and let the region decide the mode",
        )
    return {**kwargs, "mode": state.split_mode}


def _outlined_crossing(state: ParseState, short: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`pl.tile.aiv_shard(t, split=1[, lane_stride=n])` outside every split_aiv region."""
    if state.split_mode is not None:
        raise ParserSyntaxError(
            f"pl.{short} takes no split= inside a pl.split_aiv region: the region decides the mode",
            hint=f"write pl.{short}(x)",
        )
    if "mode" in kwargs:
        raise ParserSyntaxError(f"pl.{short}: pass either split= (outlined form) or mode=, not both")
    kwargs = dict(kwargs)
    split = kwargs.pop("split")
    if isinstance(split, bool) or not isinstance(split, int) or split not in (0, 1, 2):
        raise ParserTypeError(f"pl.{short}(..., split=N) takes the integer code of a pl.SplitMode "
                              f"(0 none, 1 up/down, 2 left/right), got {split!r}")
    if short == "aic_gather" and "lane_stride" in kwargs:
        raise ParserSyntaxError("pl.aic_gather takes no lane_stride=: only the cube -> vector shard "
                                "is rebalanced onto a ragged boundary")
    return {**kwargs, "mode": SplitMode(split)}


def _is_attr(op: Any, name: str) -> bool:
    try:
        return op.param(name).kind == "attr"
    except KeyError:
        return False


def has_op(name: str) -> bool:
    return name in REGISTRY


def op_by_spelling(spelling: str) -> str | None:
    """The registered op whose DSL spelling is `spelling` (e.g. `pl.dump_tag`)."""
    for op in REGISTRY.values():
        if op.spelling == spelling:
            return op.name
    return None


# --- unified dispatch ----------------------------------------------------------------------

SCALAR_EXPRS: dict[str, Callable[..., E.Expr]] = {
    "add": E.Add,
    "sub": E.Sub,
    "mul": E.Mul,
    "div": E.Div,
    "floordiv": E.FloorDiv,
    "mod": E.FloorMod,
    "pow": E.Pow,
    "min": E.Min,
    "max": E.Max,
    "minimum": E.Min,
    "maximum": E.Max,
    "eq": E.Eq,
    "ne": E.Ne,
    "lt": E.Lt,
    "le": E.Le,
    "gt": E.Gt,
    "ge": E.Ge,
    "and": E.And,
    "or": E.Or,
}

_OP_ALIASES = {"create_tile": ("tile.create",), "create_tensor": ("tensor.create",),
               "random": ("tensor.random",)}  # as the reference's pl.random, in kernels too


def namespace_of(v: Any) -> str | None:
    if isinstance(v, Tile) or (isinstance(v, E.Expr) and isinstance(v.type, TileType)):
        return "tile"
    if isinstance(v, Tensor) or (isinstance(v, E.Expr) and isinstance(v.type, TensorType)):
        return "tensor"
    return None


def candidates(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """Registry names `pl.<name>` may mean for these operands, most specific first."""
    if name in _OP_ALIASES:
        return list(_OP_ALIASES[name])
    shaped = [namespace_of(a) for a in (*args, *kwargs.values()) if namespace_of(a)]
    if shaped:
        order = [shaped[0], "tensor" if shaped[0] == "tile" else "tile"]
    else:
        state = _ACTIVE.get()
        order = ["tile", "tensor"] if (state is not None and state.in_core_function) else ["tensor", "tile"]
    shorts = [name] if not name.endswith("_") else [name, name.rstrip("_")]
    second_is_scalar = scalar_rhs(args, kwargs)
    out: list[str] = []
    for ns in order:
        for short in shorts:
            if second_is_scalar:
                out.append(scalar_form(ns, short))
            out.append(f"{ns}.{short}")
    return out


def scalar_form(namespace: str, short: str) -> str:
    """The registry name of an op's scalar-rhs form (`tile.add` -> `tile.adds`, `and_` -> `ands`)."""
    return f"{namespace}.{short.rstrip('_')}s"


def scalar_rhs(args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """Whether a binary op's second operand (positional or `rhs=`) is a scalar, not a shaped value."""
    rhs = args[1] if len(args) >= 2 else kwargs.get("rhs")
    return rhs is not None and namespace_of(rhs) is None and _is_scalar_like(rhs)


def _is_scalar_like(v: Any) -> bool:
    return isinstance(v, (int, float, Scalar)) or (isinstance(v, E.Expr) and isinstance(v.type, ScalarType))


def unified_call(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """`pl.<name>(..)`: tile op for tiles, tensor op for tensors, scalar expr for scalars."""
    active_state(f"pl.{name}")
    if not any(namespace_of(a) for a in (*args, *kwargs.values())):
        if name in SCALAR_EXPRS and len(args) == 2 and not kwargs:
            return scalar_binary(name, args[0], args[1])
        if name == "neg" and len(args) == 1:
            return unary_operator("neg", args[0])
        if name == "cast" and (cast := scalar_cast_call(args, kwargs)) is not None:
            return cast
    for full in candidates(name, args, kwargs):
        if full in REGISTRY:
            try:
                return call_op(full, args, kwargs)
            except ParserTypeError as first:
                lifted = kernel_tile_operands(full, args, kwargs, _ACTIVE.get())
                if lifted is None:
                    raise
                try:
                    return call_op(*lifted)
                except ParserTypeError:
                    raise first from None
    raise ParserNameError(
        f"pl.{name} has no registered op for these operands "
        f"(looked for {', '.join(candidates(name, args, kwargs))})"
    )


def scalar_cast_call(args: Sequence[Any], kwargs: dict[str, Any]) -> Scalar | None:
    """`pl.cast(x, target_type[, mode])` of a scalar x, else None; default mode only (as the reference)."""
    names = ("input", "target_type", "mode")
    bound = dict(zip(names, args), **kwargs)
    value = bound.get("input")
    if (len(args) > 3 or set(kwargs) - set(names[len(args):]) or "target_type" not in bound
            or isinstance(value, (list, tuple)) or namespace_of(value) is not None):
        return None
    if bound.get("mode", "round") not in ("round", 2):
        raise ParserTypeError(f"pl.cast of a scalar takes only mode 'round', got {bound['mode']!r}")
    return cast_scalar(value, bound["target_type"])


def cast_scalar(value: Any, dtype: Any) -> Scalar:
    if not isinstance(dtype, DataType):
        raise ParserTypeError(f"pl.cast needs a dtype such as pl.INT32, got {dtype!r}")
    e = literal(value, None) if not isinstance(value, DSLValue) else value.unwrap()
    if e is None or not isinstance(e.type, ScalarType):
        raise ParserTypeError(f"pl.cast of a non-scalar value {value!r}")
    return wrap(E.Cast(e, dtype, current_span()))


# --- scalar expressions and Python operators -----------------------------------------------


def literal(v: Any, other: DataType | None) -> E.Expr | None:
    """A Python literal as IR, taking the dtype of the operand it meets (int↔int, float↔float)."""
    span = current_span()
    if isinstance(v, bool):
        return E.ConstBool(v, span)
    if isinstance(v, int):
        return _values.int_literal(v, other if other is not None and other.is_int else INDEX, span)
    if isinstance(v, float):
        return E.ConstFloat(v, other if other is not None and other.is_float else FP32, span)
    return None


def _scalar_operand(v: Any, other: Any) -> E.Expr:
    if isinstance(v, DSLValue):
        e = v.unwrap()
        if not isinstance(e.type, ScalarType):
            raise ParserTypeError(f"expected a scalar operand, got {describe_value(v)}")
        return e
    other_dtype = (
        other.type.dtype if isinstance(other, DSLValue) and isinstance(other.type, ScalarType) else None
    )
    e = literal(v, other_dtype)
    if e is None:
        raise ParserTypeError(f"cannot use {describe_value(v)} in a scalar expression")
    return e


def scalar_binary(name: str, lhs: Any, rhs: Any) -> Any:
    if not isinstance(lhs, DSLValue) and not isinstance(rhs, DSLValue):
        return _fold(name, lhs, rhs)
    a, b = _scalar_operand(lhs, rhs), _scalar_operand(rhs, lhs)
    if name == "pow" and isinstance(b, E.ConstInt) and b.value < 0 and not a.type.dtype.is_float:
        raise ParserTypeError(f"an integer raised to the negative power {b.value} is not an integer; "
                              "cast the base to a float dtype first")
    if name in ("shl", "shr"):  # a << b is a * 2 ** b; a >> b is a // 2 ** b (arithmetic shift)
        if a.type.dtype.is_float or b.type.dtype.is_float:
            raise ParserTypeError(f"operator {_SYMBOLS[name]!r} takes integers, got {a.type.dtype.name} and "
                                  f"{b.type.dtype.name}")
        scale = E.Pow(_scalar_operand(2, b), b, span=current_span())
        return wrap((E.Mul if name == "shl" else E.FloorDiv)(a, scale, span=current_span()))
    return wrap(SCALAR_EXPRS[name](a, b, span=current_span()))


_PY_OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "shl": operator.lshift,
    "shr": operator.rshift, "min": min, "max": max, "minimum": min, "maximum": max,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge, "neg": operator.neg, "not": operator.not_,
}


def _fold(name: str, *operands: Any) -> Any:
    """`name` of Python values, evaluated now; an error is the user's, at their expression."""
    try:
        return _PY_OPS[name](*operands)
    except (ArithmeticError, TypeError) as e:
        if raised_by_plang(e):
            raise
        raise ParserTypeError(f"cannot evaluate {name} of {' and '.join(map(describe_value, operands))} at "
                              f"parse time: {e}") from None


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "shl": "<<", "shr": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_CMP_TYPES = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}  # the cmp ops' cmp_type codes
_MIRRORED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def binary_operator(name: str, lhs: Any, rhs: Any) -> Any:
    """`lhs <op> rhs` where at least one side is a DSL value."""
    if not (namespace_of(lhs) or namespace_of(rhs)):
        return scalar_binary(name, lhs, rhs)
    if name in _CMP_TYPES:
        if not namespace_of(lhs):
            lhs, rhs, name = rhs, lhs, _MIRRORED[name]
        return unified_call("cmp", (lhs, rhs), {"cmp_type": _CMP_TYPES[name]})
    shaped = _SHAPED_OPERATORS.get(name)
    if shaped is None:
        raise ParserTypeError(
            f"operator {_SYMBOLS.get(name, name)!r} is not defined on tiles / tensors",
            hint="no op computes a floor division; use pl.div and round with pl.cast(x, dtype, mode='floor')"
            if name == "floordiv" else "call the op explicitly",
        )
    return shaped(lhs, rhs)


def _commutative(name: str) -> Callable[[Any, Any], Any]:
    def build(lhs: Any, rhs: Any) -> Any:
        return unified_call(name, (lhs, rhs) if namespace_of(lhs) else (rhs, lhs), {})

    return build


def _shaped_left(lhs: Any, like: Any) -> Any:
    """A scalar left operand broadcast to `like`'s shape (`pl.expands`); a shaped one as is."""
    return lhs if namespace_of(lhs) else unified_call("expands", (like, lhs), {})


def _ordered(name: str) -> Callable[[Any, Any], Any]:
    """`-` and `/`: a scalar on the left becomes a tile/tensor of that value first."""

    def build(lhs: Any, rhs: Any) -> Any:
        return unified_call(name, (_shaped_left(lhs, rhs), rhs), {})

    return build


def _floor_mod(lhs: Any, rhs: Any) -> Any:
    """Python's `%` (the result takes the divisor's sign) from truncating remainders:
    fmod(fmod(a, b) + b, b). Exact for integers; for floats `+ b` may round, as in Python."""
    lhs = _shaped_left(lhs, rhs)
    r = unified_call("fmod", (lhs, rhs), {})
    return unified_call("fmod", (unified_call("add", (r, rhs), {}), rhs), {})


def _power(base: Any, exponent: Any) -> Any:
    """`x ** k` for a constant k: repeated multiplication (recip for k < 0), sqrt / rsqrt for
    ±0.5, a tile/tensor of ones for 0."""
    if (
        not namespace_of(base)
        or isinstance(exponent, bool)
        or not isinstance(exponent, (int, float))
        or not (float(exponent).is_integer() or abs(exponent) == 0.5)
    ):
        raise ParserTypeError(
            "`**` on a tile / tensor needs a constant integer exponent or ±0.5, got "
            f"{describe_value(exponent)}"
            if namespace_of(base)
            else "`**` with a tile / tensor exponent is not supported",
            hint="for a positive base x write pl.exp(pl.mul(pl.log(x), y))",
        )
    if abs(exponent) == 0.5:
        return unified_call("sqrt" if exponent > 0 else "rsqrt", (base,), {})
    n = abs(int(exponent))
    if n == 0:
        one = 1.0 if base.type.dtype.is_float else 1
        return unified_call("expands", (base, one), {})
    result, square = None, base
    while True:
        if n & 1:
            result = square if result is None else unified_call("mul", (result, square), {})
        n >>= 1
        if not n:
            break
        square = unified_call("mul", (square, square), {})
    return unified_call("recip", (result,), {}) if exponent < 0 else result


_SHAPED_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": _commutative("add"),
    "mul": _commutative("mul"),
    "sub": _ordered("sub"),
    "div": _ordered("div"),
    "mod": _floor_mod,
    "pow": _power,
}


def logical(name: str, operands: Sequence[Any]) -> Any:
    """`a and b and c` / `a or b`: folded for constants, `And`/`Or` exprs otherwise."""
    if any(namespace_of(v) for v in operands):
        raise ParserTypeError(
            f"`{name}` of tile / tensor values is not supported (a chained comparison such as "
            "`a < t < b` is one)",
            hint="compare once per mask and combine masks with pl.and_(m1, m2) / pl.or_(m1, m2)",
        )
    result = operands[0]
    for v in operands[1:]:
        if not isinstance(result, DSLValue) and not isinstance(v, DSLValue):
            result = (result and v) if name == "and" else (result or v)
        else:
            result = wrap(SCALAR_EXPRS[name](_bool_operand(result), _bool_operand(v), span=current_span()))
    return result


def _bool_operand(v: Any) -> E.Expr:
    return v.unwrap() if isinstance(v, DSLValue) else literal(bool(v), None)


def unary_operator(name: str, v: Any) -> Any:
    if namespace_of(v):
        if name == "not":
            raise ParserTypeError("`not` of a tile / tensor is not supported", hint="use pl.not_(x)")
        return unified_call(name, (v,), {})
    if not isinstance(v, DSLValue):
        return _fold(name, v)
    cls = E.Neg if name == "neg" else E.Not
    return wrap(cls(_scalar_operand(v, None), current_span()))


# --- subscripts and shapes -----------------------------------------------------------------


def _index(v: Any, what: str) -> Any:
    if (
        isinstance(v, bool)
        or isinstance(v, float)
        or (isinstance(v, DSLValue) and not (isinstance(v.type, ScalarType) and v.type.dtype.is_int))
    ):
        raise ParserTypeError(
            f"{what} must be an integer, got {describe_value(v)}",
            hint="index with int literals or integer scalars",
        )
    if not isinstance(v, (int, DSLValue)):
        raise ParserTypeError(f"{what} must be an integer, got {describe_value(v)}")
    return v


def subscript(value: ShapedValue, key: Any) -> DSLValue:
    """numpy-style, as the reference: `x[i, j]` naming every axis reads one element; else a slice
    in which an integer index removes its axis (`x[r]` of a [2, 1, 64] tensor is [1, 64]), `a:b`
    keeps it and missing trailing axes are `:`. A tile keeps two axes (leading units)."""
    keys = key if isinstance(key, tuple) else (key,)
    shape = value.shape
    if len(keys) > len(shape):
        raise ParserTypeError(f"too many indices: {len(keys)} for a rank-{len(shape)} value")
    drops = [axis for axis, k in enumerate(keys) if not isinstance(k, slice)]
    if len(drops) == len(shape):
        idx = [_index(k, "an index") for k in keys]
        return unified_call("read", (value, idx), {})
    offsets, sizes = slice_bounds(value, keys)
    return unified_call("slice", (value, sizes, offsets), {"drop_dims": drops} if drops else {})


def slice_bounds(value: ShapedValue, keys: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Offsets and extents of a subscript (`:` takes the whole dim, an int a unit dim)."""
    shape = value.shape
    offsets: list[Any] = []
    sizes: list[Any] = []
    for i, dim in enumerate(shape):
        k = keys[i] if i < len(keys) else slice(None)
        if isinstance(k, slice):
            if k.step is not None:
                raise ParserTypeError("slice steps are not supported in DSL subscripts")
            start = 0 if k.start is None else _index(k.start, "a slice bound")
            stop = dim if k.stop is None else _index(k.stop, "a slice bound")
            offsets.append(start)
            sizes.append(_extent(start, stop))
        else:
            offsets.append(_index(k, "an index"))
            sizes.append(1)
    return offsets, sizes


def _extent(start: Any, stop: Any) -> Any:
    """`stop - start`, an int when the bounds differ by a constant (`x[:, k : k + 64]`)."""
    if isinstance(start, int) and start == 0:
        return stop
    folded = constant_extent(start, stop)
    return binary_operator("sub", stop, start) if folded is None else folded


def dynamic_dim(value: ShapedValue, axis: int, dim: E.Expr) -> Any:
    """A dynamic dim of `value`: `pl.tensor.dim(t, axis)` when registered, else the dim var."""
    if isinstance(value, Tensor) and has_op("tensor.dim") and is_parsing():
        return call_op("tensor.dim", (value, axis), {})
    return wrap(dim)


def as_bool_literal(v: Any) -> E.Expr:
    e = v.unwrap() if isinstance(v, DSLValue) else literal(v, None)
    if e is None or not isinstance(e.type, ScalarType):
        raise ParserTypeError(f"a condition must be a scalar, got {describe_value(v)}")
    return e


register_operators(Operators(binary_operator, unary_operator, subscript, dynamic_dim, call_op, current_span))

__all__ = [
    "BOOL",
    "ParseState",
    "active_state",
    "is_parsing",
    "parsing",
    "call_op",
    "unified_call",
    "binary_operator",
    "unary_operator",
    "logical",
    "subscript",
    "slice_bounds",
    "literal",
    "current_span",
]
