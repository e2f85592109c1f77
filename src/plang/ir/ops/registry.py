"""The op registry: one `Op` per operator with its signature, type deduction and facts.

`make_call(name, args, kwargs, span)` binds user arguments to the op's parameters,
coerces Python values (ints, floats, index lists) into IR, runs type deduction and
returns a typed `Call`. Deduction errors are `OpTypeError` / `OpValueError`, whose message
names the op and the offending operand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ...dtypes import BOOL, FP32, INDEX, DataType
from ..expr import Call, ConstBool, ConstFloat, ConstInt, Expr, MakeTuple
from ..span import Span
from ..types import ArrayType, ScalarType, TensorType, TileType, TupleType, Type

REQUIRED = object()


class OpTypeError(TypeError):
    """An operand has the wrong kind, dtype or shape for an op."""


class OpValueError(ValueError):
    """An attribute or static value is out of range for an op."""


@dataclass(frozen=True)
class Param:
    """One op parameter.

    kind: `tensor`, `tile`, `shaped` (tensor or tile), `scalar` (scalar expr or number),
    `value` (any expr or number), `index_list` (sequence of integer exprs -> MakeTuple),
    `indices` (one integer expr or a sequence of them -> MakeTuple),
    `array` (an on-core array), `attr` (a static Python value kept in the call's kwargs).
    Expression parameters become positional `args` when required and `kwargs` when optional.
    """

    name: str
    kind: str
    default: Any = REQUIRED

    @property
    def is_expr(self) -> bool:
        return self.kind != "attr"

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class OpFacts:
    """What passes and backends need to know about an op.

    unit: `vector` | `cube` | `memory` | `scalar` | `pipe` | `sync` | `alloc` | `system`.
    reads / writes: parameter names the op reads / writes in memory (tensors or tiles).
    """

    unit: str
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    @property
    def pure(self) -> bool:
        return not self.writes and self.unit not in ("pipe", "sync")


class Bound(Mapping[str, Any]):
    """Arguments bound to parameter names, as seen by a deduction rule."""

    def __init__(self, op: Op, values: dict[str, Any]) -> None:
        self.op, self._values = op, values

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(key) from None

    def fail(self, message: str) -> OpTypeError:
        return OpTypeError(f"{self.op.name}: {message}")

    def bad_value(self, message: str) -> OpValueError:
        return OpValueError(f"{self.op.name}: {message}")


Deduce = Callable[[Bound], Type]


@dataclass(frozen=True, eq=False)
class Op:
    name: str
    params: tuple[Param, ...]
    deduce: Deduce = field(repr=False)
    facts: OpFacts
    doc: str = ""
    spelling: str = ""  # how the DSL writes it, e.g. "pl.tile.add" (the default) or "pl.dump_tag"

    @property
    def namespace(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (get_op, (self.name,))


REGISTRY: dict[str, Op] = {}


def register(name: str, params: Sequence[Param], deduce: Deduce, *, unit: str,
             reads: Sequence[str] | None = None, writes: Sequence[str] = (), doc: str = "",
             spelling: str = "") -> Op:
    """Register an op once. `reads` defaults (None) to every shaped operand that is not
    written; pass `()` for an op that reads no operand's contents."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} registered twice")
    if reads is None:
        reads = tuple(p.name for p in params
                      if p.kind in ("tensor", "tile", "shaped") and p.name not in writes)
    op = Op(name, tuple(params), deduce, OpFacts(unit, tuple(reads), tuple(writes)), doc,
            spelling or f"pl.{name}")
    REGISTRY[name] = op
    return op


def get_op(name: str) -> Op:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}") from None


def make_call(name: str | Op, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None,
              span: Span | None = None) -> Call:
    """Bind, coerce and type-check a call of a registered op."""
    op = name if isinstance(name, Op) else get_op(name)
    values = _bind(op, args, kwargs or {})
    call_args: list[Expr] = []
    call_kwargs: dict[str, Any] = {}
    for p in op.params:
        if p.name not in values:
            continue
        v = values[p.name]
        if p.is_expr and p.required:
            call_args.append(v)
        elif v is not None or p.is_expr is False:
            if p.default is not REQUIRED and _same(v, p.default):
                continue
            call_kwargs[p.name] = v
    full = {p.name: values.get(p.name, None if p.default is REQUIRED else p.default) for p in op.params}
    result_type = op.deduce(Bound(op, full))
    return Call(op, call_args, call_kwargs, result_type, span)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b if not isinstance(a, Expr) else False


def _bind(op: Op, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    if len(args) > len(op.params):
        raise OpTypeError(f"{op.name} takes at most {len(op.params)} arguments "
                          f"({', '.join(p.name for p in op.params)}), got {len(args)}")
    values: dict[str, Any] = {}
    for p, a in zip(op.params, args):
        values[p.name] = a
    for k, v in kwargs.items():
        try:
            op.param(k)
        except KeyError:
            raise OpTypeError(f"{op.name} got an unexpected keyword argument {k!r}; "
                              f"parameters are {', '.join(p.name for p in op.params)}") from None
        if k in values:
            raise OpTypeError(f"{op.name} got multiple values for argument {k!r}")
        values[k] = v
    for p in op.params:
        if p.name not in values:
            if p.required:
                raise OpTypeError(f"{op.name} missing required argument {p.name!r}")
            continue
        values[p.name] = coerce(op, p, values[p.name])
    return values


def coerce(op: Op, p: Param, v: Any) -> Any:
    """Convert a Python value to the IR form parameter `p` expects, checking its kind."""
    if v is None and not p.required:
        return None
    kind = p.kind
    if kind == "attr":
        return v
    if kind == "indices" and not isinstance(v, (list, tuple, MakeTuple)):
        v = [v]
    if kind in ("index_list", "indices"):
        if isinstance(v, MakeTuple):
            elems = v.elements
        elif isinstance(v, (list, tuple)):
            elems = tuple(_index_expr(op, p, e) for e in v)
        else:
            raise OpTypeError(f"{op.name}: argument {p.name!r} must be a list of integers, "
                              f"got {_kind_of(v)}")
        for e in elems:
            if not (isinstance(e.type, ScalarType) and (e.type.dtype.is_int)):
                raise OpTypeError(f"{op.name}: every element of {p.name!r} must be an integer scalar, "
                                  f"got {_kind_of(e)}")
        return v if isinstance(v, MakeTuple) else MakeTuple(elems)
    e = as_expr(v)
    if e is None:
        raise OpTypeError(f"{op.name}: argument {p.name!r} must be a {kind}, got {_kind_of(v)}")
    t = e.type
    ok = {
        "tensor": isinstance(t, TensorType),
        "tile": isinstance(t, TileType),
        "shaped": isinstance(t, (TensorType, TileType)),
        "scalar": isinstance(t, ScalarType),
        "value": True,
        "tuple": isinstance(t, TupleType),
        "array": isinstance(t, ArrayType),
    }.get(kind)
    if ok is None:
        raise ValueError(f"op {op.name}: parameter {p.name!r} has unknown kind {kind!r}")
    if not ok:
        raise OpTypeError(f"{op.name}: argument {p.name!r} must be a {kind}, got {_kind_of(e)}")
    return e


def _index_expr(op: Op, p: Param, e: Any) -> Expr:
    if isinstance(e, bool) or isinstance(e, float) or isinstance(e, (list, tuple)):
        raise OpTypeError(f"{op.name}: every element of {p.name!r} must be an integer scalar, "
                          f"got {_kind_of(e)}")
    x = as_expr(e)
    if x is None:
        raise OpTypeError(f"{op.name}: every element of {p.name!r} must be an integer scalar, "
                          f"got {_kind_of(e)}")
    return x


def as_expr(v: Any, dtype: DataType | None = None) -> Expr | None:
    """A Python number / bool / Expr as an IR expression (None when not convertible)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return ConstBool(v)
    if isinstance(v, int):
        return ConstInt(v, dtype or INDEX)
    if isinstance(v, float):
        return ConstFloat(v, dtype or FP32)
    unwrap = getattr(v, "unwrap", None)
    if unwrap is not None:
        try:
            return unwrap()
        except Exception:
            return None
    return None


def _kind_of(v: Any) -> str:
    if isinstance(v, Expr):
        from ..types import describe_type

        return describe_type(v.type)
    return f"{type(v).__name__} {v!r}"


__all__ = ["BOOL", "REGISTRY", "Op", "OpFacts", "OpTypeError", "OpValueError", "Param", "Bound",
           "register", "get_op", "make_call", "as_expr", "coerce"]
