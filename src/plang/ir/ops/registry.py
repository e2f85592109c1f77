"""The op registry: one `Op` per operator with its signature, type deduction and facts.

`make_call(name, args, kwargs, span)` binds user arguments to the op's parameters,
coerces Python values (ints, floats, index lists) into IR, runs type deduction and
returns a typed `Call`. Deduction errors are `OpTypeError` / `OpValueError`, whose message
names the op and the offending operand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Callable, Mapping, Sequence

from ...dtypes import BOOL, FP32, INDEX, DataType
from ..expr import Call, ConstBool, ConstFloat, ConstInt, Expr, MakeTuple
from ..span import Span
from ..types import ArrayType, ScalarType, TensorType, TileType, TupleType, Type, dim_value

REQUIRED = object()


class OpTypeError(TypeError):
    """An operand has the wrong kind, dtype or shape for an op."""


class OpValueError(ValueError):
    """An attribute or static value is out of range for an op."""


class ParamKind(StrEnum):
    """What a parameter accepts. Expression kinds become positional `args` when required and
    `kwargs` when optional; `ATTR` is a static Python value kept in the call's kwargs."""

    TENSOR = "tensor"
    TILE = "tile"
    SHAPED = "shaped"  # tensor or tile
    SCALAR = "scalar"  # scalar expr or number
    VALUE = "value"  # any expr or number
    TUPLE = "tuple"
    INDEX_LIST = "index_list"  # sequence of integer exprs -> MakeTuple
    INDICES = "indices"  # one integer expr or a sequence of them -> MakeTuple
    ARRAY = "array"  # an on-core array
    ATTR = "attr"
    FAMILY = "X"  # in a `family` declaration: the family's own kind (tensor or tile)


class Unit(StrEnum):
    """The core unit that executes an op."""

    VECTOR = "vector"
    CUBE = "cube"
    MEMORY = "memory"
    SCALAR = "scalar"
    PIPE = "pipe"
    SYNC = "sync"
    ALLOC = "alloc"
    SYSTEM = "system"


class Pattern(Enum):
    """How an op's result elements depend on its operands' (TVM's TOpPattern), which is what
    blocking and fusion decide by."""

    ELEMENTWISE = "elementwise"  # element (r, c) from operand elements (r, c) and scalars
    ROW_BROADCAST = "row_broadcast"  # ... and element r of a one-column operand
    COL_BROADCAST = "col_broadcast"  # ... and element c of a one-row operand
    ROW_REDUCTION = "row_reduction"  # row r from operand row r
    COL_REDUCTION = "col_reduction"
    MATMUL = "matmul"
    OPAQUE = "opaque"


@dataclass(frozen=True)
class Param:
    """One op parameter: its name, `ParamKind` and default (`REQUIRED` when it has none)."""

    name: str
    kind: ParamKind
    default: Any = REQUIRED

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", ParamKind(self.kind))
        except ValueError:
            raise ValueError(f"parameter {self.name!r}: unknown kind {self.kind!r}; "
                             f"kinds are {', '.join(k.value for k in ParamKind)}") from None

    @property
    def is_expr(self) -> bool:
        return self.kind is not ParamKind.ATTR

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class OpFacts:
    """What passes and backends know about an op, read from here and nowhere else.

    unit: the `Unit` that runs it; pattern: its `Pattern`.
    reads / writes: parameter names the op reads / writes in memory (tensors or tiles).
    row_local: row r of the result depends only on row r of its tile operands (row fusion),
    besides a column broadcast's one-row operand, which every row reads; defaults to the
    elementwise, row- and column-broadcast and row-reduction patterns.
    fusible: the result may be computed lazily inside the op that uses it; defaults to the
    elementwise and broadcast patterns.
    reduction: the combining operation of a reduction (`sum`, `max`, `argmax`, ...).
    accumulator: the operand an accumulating op (matmul_acc) reads and overwrites in place.
    streamed: the tile operands the op reads chunk by chunk, so a fused producer there needs
    no buffer (a matmul packs its B operand as it reads it, and reads a loaded A in place).
    semantics: the scalar meaning of an elementwise op composed from other elementwise ops,
    `semantics(m, *operands)` where `m` has one method per primitive (`m.exp`, `m.add`,
    `m.const`, ...); every backend and the torch reference evaluate it with their own `m`.
    """

    unit: Unit
    pattern: Pattern = Pattern.OPAQUE
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    row_local: bool = False
    fusible: bool = False
    reduction: str | None = None
    accumulator: str | None = None
    streamed: tuple[str, ...] = ()
    semantics: Callable[..., Any] | None = field(default=None, compare=False)

    @property
    def pure(self) -> bool:
        return not self.writes and self.unit not in (Unit.PIPE, Unit.SYNC)

    @property
    def elementwise(self) -> bool:
        return self.pattern is Pattern.ELEMENTWISE

    @property
    def in_place_safe(self) -> bool:
        """Each result element is computed from operand elements at the same position only,
        so the result may overwrite an operand's buffer."""
        return self.pattern is Pattern.ELEMENTWISE


_ROW_LOCAL = (Pattern.ELEMENTWISE, Pattern.ROW_BROADCAST, Pattern.COL_BROADCAST, Pattern.ROW_REDUCTION)
_FUSIBLE = (Pattern.ELEMENTWISE, Pattern.ROW_BROADCAST, Pattern.COL_BROADCAST)


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
    unified: bool = True  # a tile / tensor op reachable as `pl.<short name>` (dispatched by operand)

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

    def streamed_args(self, args: tuple, only: str | None = None) -> list:
        """The expressions of a call's `facts.streamed` operands (`args`: the call's args;
        `only`: of that one operand, where it is streamed)."""
        required = [p.name for p in self.params if p.is_expr and p.required]
        return [args[required.index(n)] for n in self.facts.streamed if only in (None, n)]

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (get_op, (self.name,))


REGISTRY: dict[str, Op] = {}


def register(name: str, params: Sequence[Param], deduce: Deduce, *, unit: str,
             pattern: Pattern = Pattern.OPAQUE, reads: Sequence[str] | None = None,
             writes: Sequence[str] = (), row_local: bool | None = None, fusible: bool | None = None,
             reduction: str | None = None, accumulator: str | None = None, streamed: Sequence[str] = (),
             semantics: Callable[..., Any] | None = None, doc: str = "", spelling: str = "",
             unified: bool = True) -> Op:
    """Register an op once. `reads` defaults (None) to every shaped operand that is not
    written; pass `()` for an op that reads no operand's contents. `row_local` / `fusible`
    default from `pattern` (see `OpFacts`)."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} registered twice")
    try:
        unit = Unit(unit)
    except ValueError:
        raise ValueError(f"op {name!r}: unknown unit {unit!r}; units are "
                         f"{', '.join(u.value for u in Unit)}") from None
    if not isinstance(pattern, Pattern):
        raise ValueError(f"op {name!r}: pattern must be a Pattern, got {pattern!r}")
    if any(p.kind is ParamKind.FAMILY for p in params):
        raise ValueError(f"op {name!r}: kind 'X' is only for `family` declarations")
    names = {p.name for p in params}
    accumulated = (accumulator,) if accumulator else ()
    for what, listed in (("reads", reads or ()), ("writes", writes), ("accumulator", accumulated),
                         ("streamed", streamed)):
        unknown = [n for n in listed if n not in names]
        if unknown:
            raise ValueError(f"op {name!r}: {what} names unknown parameter(s) {unknown}")
    if semantics is not None and pattern is not Pattern.ELEMENTWISE:
        raise ValueError(f"op {name!r}: scalar semantics need the ELEMENTWISE pattern")
    if reads is None:
        reads = tuple(p.name for p in params
                      if p.kind in (ParamKind.TENSOR, ParamKind.TILE, ParamKind.SHAPED)
                      and p.name not in writes)
    facts = OpFacts(unit, pattern, tuple(reads), tuple(writes),
                    pattern in _ROW_LOCAL if row_local is None else row_local,
                    pattern in _FUSIBLE if fusible is None else fusible,
                    reduction, accumulator, tuple(streamed), semantics)
    op = Op(name, tuple(params), deduce, facts, doc, spelling or f"pl.{name}", unified)
    REGISTRY[name] = op
    return op


def ops_where(predicate: Callable[[Op], bool], namespace: str | None = None) -> frozenset[str]:
    """The names of registered ops (of `namespace`, when given) satisfying `predicate`."""
    return frozenset(n for n, op in REGISTRY.items()
                     if (namespace is None or op.namespace == namespace) and predicate(op))


def get_op(name: str) -> Op:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}") from None


def make_call(name: str | Op, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None,
              span: Span | None = None) -> Call:
    """Bind, coerce and type-check a call of a registered op."""
    op = name if isinstance(name, Op) else get_op(name)
    kwargs = dict(kwargs or {})
    meta = kwargs.pop(CALL_ATTRS, None) if not any(p.name == CALL_ATTRS for p in op.params) else None
    values = _bind(op, args, kwargs)
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
    _check_extents(op, result_type)
    if meta:
        call_kwargs[CALL_ATTRS] = _call_attrs(op, meta)
    return Call(op, call_args, call_kwargs, result_type, span)


def _check_extents(op: Op, t: Type) -> None:
    """A result tile / tensor has no negative static dimension (nor a tuple of results)."""
    for r in t.types if isinstance(t, TupleType) else (t,):
        if isinstance(r, (TensorType, TileType)):
            bad = [v for d in r.shape if (v := dim_value(d)) is not None and v < 0]
            if bad:
                raise OpValueError(f"{op.name}: result shape {[dim_value(d) for d in r.shape]} has a "
                                   f"negative dimension {bad[0]}")


CALL_ATTRS = "attrs"
"""Keyword of every op call for compiler metadata (`attrs={"pipeline_membership": "0:1"}`): kept
on the call as given, printed back, never read by type deduction."""


def _call_attrs(op: Op, meta: Any) -> dict[str, Any]:
    if not isinstance(meta, Mapping) or not all(isinstance(k, str) for k in meta):
        raise OpTypeError(f"{op.name}: attrs= takes a dict with string keys, got {meta!r}")
    return dict(meta)


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
    if kind is ParamKind.ATTR:
        return v
    if kind is ParamKind.INDICES and not isinstance(v, (list, tuple, MakeTuple)):
        v = [v]
    if kind in (ParamKind.INDEX_LIST, ParamKind.INDICES):
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
        ParamKind.TENSOR: isinstance(t, TensorType),
        ParamKind.TILE: isinstance(t, TileType),
        ParamKind.SHAPED: isinstance(t, (TensorType, TileType)),
        ParamKind.SCALAR: isinstance(t, ScalarType),
        ParamKind.VALUE: True,
        ParamKind.TUPLE: isinstance(t, TupleType),
        ParamKind.ARRAY: isinstance(t, ArrayType),
    }[kind]
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
        if not (dtype or INDEX).holds(v):
            raise OpValueError(f"integer literal {v} is out of the range of {(dtype or INDEX).name}")
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
    from ..types import describe_value

    return describe_value(v)


__all__ = ["BOOL", "REGISTRY", "Op", "OpFacts", "OpTypeError", "OpValueError", "Param", "ParamKind",
           "Pattern", "Unit", "Bound",
           "CALL_ATTRS", "register", "get_op", "make_call", "as_expr", "coerce", "ops_where"]
