"""DSL values and type annotations: `pl.Tensor`, `pl.Tile`, `pl.Scalar`, `pl.Tuple`, ...

Each class plays two roles. Subscripted (`pl.Tensor[[64, 128], pl.FP32]`) it is a type
annotation and yields a `TypeSpec`. Instantiated by the parser it wraps an IR expression,
and Python operators / subscripts on it build IR through `dispatch` (`register_operators`).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from ..dtypes import INDEX, TASK_ID, DataType
from ..errors import ParserTypeError
from ..ir import types as ir_types
from ..ir.enums import MemorySpace, PadValue, ParamDirection, TensorLayout, TileLayout
from ..ir.expr import ConstInt, Expr, Var
from ..ir.span import Span
from ..ir.types import (
    ArrayType,
    AsyncHandleType,
    PtrType,
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Type,
    UnknownType,
    dim_value,
)


class TypeSpec:
    """A resolved annotation: an IR type and a parameter direction."""

    __slots__ = ("type", "direction")

    def __init__(self, type: Type, direction: ParamDirection = ParamDirection.In) -> None:
        self.type, self.direction = type, direction

    def __repr__(self) -> str:
        return f"TypeSpec({self.type!r}, {self.direction.name})"

    @property
    def dtype(self) -> DataType:
        """The element (or scalar) dtype the annotation names."""
        return self.type.dtype

    @property
    def shape(self) -> tuple[Any, ...]:
        """The annotated shape: ints, and `pl.dynamic` dims as their IR variables."""
        return tuple(ir_types.dim_value(d) if ir_types.dim_value(d) is not None else d
                     for d in self.type.shape)


class _LegacyCall:
    """`pl.Tensor((64, 128), pl.FP16)`, `pl.Tile(shape, dtype, ...)`, `pl.Scalar(pl.FP32)`: the
    reference's older call spelling of an annotation, the same as the subscript form. (The
    parser builds the values themselves from one IR expression.)"""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if (len(args) == 1 and isinstance(args[0], Expr) and not kwargs  # the parser's wrappers
                or "__class_getitem__" not in cls.__dict__):  # a subclass such as pl.dynamic's DynVar
            return super().__new__(cls)
        if kwargs:
            raise ParserTypeError(f"pl.{cls.__name__}(...) as an annotation takes positional items "
                                  f"only, got {', '.join(kwargs)}=", hint=f"write pl.{cls.__name__}[...]")
        return cls[args[0] if len(args) == 1 else args]


class TileView:
    """`pl.TileView(valid_shape=[..], blayout=.., slayout=.., fractal=.., pad=.., stride=[..],
    start_offset=..)` in a tile annotation: the valid region and the on-chip layout."""

    __slots__ = ("valid_shape", "view")

    def __init__(self, valid_shape: Any = None, stride: Any = (), start_offset: Any = None,
                 blayout: TileLayout | None = None, slayout: TileLayout | None = None,
                 fractal: int | None = None, pad: PadValue = PadValue.null) -> None:
        self.valid_shape = None if valid_shape is None else _dims(valid_shape, "valid_shape")
        for name, v, cls in (("blayout", blayout, TileLayout), ("slayout", slayout, TileLayout),
                             ("pad", pad, PadValue)):
            if v is not None and not isinstance(v, cls):
                raise ParserTypeError(f"pl.TileView {name} must be a pl.{cls.__name__}, got {_describe(v)}")
        if fractal is not None and (isinstance(fractal, bool) or not isinstance(fractal, int)):
            raise ParserTypeError(f"pl.TileView fractal must be an int, got {_describe(fractal)}")
        self.view = ir_types.TileView(blayout, slayout, fractal, pad, _dims(stride, "stride"),
                                      None if start_offset is None else _dim(start_offset))


class TensorView:
    """`pl.TensorView(stride=[..], layout=.., valid_shape=[..], pad=..)` in a tensor annotation."""

    __slots__ = ("layout", "view")

    def __init__(self, valid_shape: Any = None, stride: Any = (),
                 layout: TensorLayout = TensorLayout.ND, pad: PadValue = PadValue.null) -> None:
        if not isinstance(layout, TensorLayout) or not isinstance(pad, PadValue):
            raise ParserTypeError("pl.TensorView takes layout=pl.TensorLayout.<X> and pad=pl.PadValue.<X>")
        self.layout = layout
        self.view = ir_types.TensorView(_dims(stride, "stride"),
                                        None if valid_shape is None else _dims(valid_shape, "valid_shape"),
                                        pad)


class MemRef:
    """`pl.MemRef(base, byte_offset, size)` / `pl.MemRef("name", slots=N)[k]` in a tensor or tile
    annotation: where its memory lives (placement only; the CPU backend allocates itself).
    `name = pl.MemRef(slots=N)` declares an allocation named after the variable it is bound to."""

    __slots__ = ("memref",)

    def __init__(self, base: Any = None, byte_offset: Any = None, size: Any = None, *,
                 slots: int = 1, slot: Any = None) -> None:
        if base is None and byte_offset is None and size is None:
            base = ""  # named by the variable it is read through (`named`)
        elif isinstance(base, DSLValue) and isinstance(base.type, PtrType):
            base = base.unwrap()
        elif not isinstance(base, str) or not base:
            raise ParserTypeError(
                f"pl.MemRef needs a base: a name string or a pl.Ptr variable, got {_describe(base)}",
                hint='write pl.MemRef("scratch") or pl.MemRef(ptr, byte_offset, size)',
            )
        if (byte_offset is None) != (size is None):
            raise ParserTypeError("pl.MemRef takes both byte_offset and size, or neither")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise ParserTypeError(f"pl.MemRef size must be a non-negative int, got {_describe(size)}")
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise ParserTypeError(f"pl.MemRef slots must be a positive int, got {_describe(slots)}")
        offset = None if byte_offset is None else ir_types.as_dim(_dim(byte_offset))
        self.memref = ir_types.MemRef(base, offset, size, slots,
                                      None if slot is None else ir_types.as_dim(_dim(slot)))

    def named(self, name: str) -> MemRef:
        """This declaration read through the variable `name`: an unnamed one takes that name."""
        if self.memref.base != "":
            return self
        out = MemRef.__new__(MemRef)
        out.memref = self.memref.replace(base=name)
        return out

    def __getitem__(self, slot: Any) -> MemRef:
        m = self.memref
        if m.slots == 1:
            raise ParserTypeError("only a multi-slot pl.MemRef(..., slots=N) can be subscripted")
        k = _dim(slot)
        if isinstance(k, int) and not 0 <= k < m.slots:
            raise ParserTypeError(f"MemRef slot {k} is out of range for {m.slots} slots")
        out = MemRef.__new__(MemRef)
        out.memref = m.replace(slot=ir_types.as_dim(k))
        return out


def _dim(d: Any) -> Any:
    if isinstance(d, bool) or isinstance(d, float):
        raise ParserTypeError(f"a shape dimension must be an integer, got {d!r}")
    if isinstance(d, int):
        return d
    if isinstance(d, DSLValue) and isinstance(d.type, ScalarType) and d.type.dtype.is_int:
        return d.unwrap()
    if isinstance(d, Expr) and isinstance(d.type, ScalarType):
        return d
    raise ParserTypeError(f"a shape dimension must be an int or a pl.dynamic dim, got {_describe(d)}")


def _dims(dims: Any, what: str = "shape") -> list[Any]:
    if not isinstance(dims, (list, tuple)):
        raise ParserTypeError(f"{what} must be a list of dimensions, got {_describe(dims)}")
    return [_dim(d) for d in dims]


def int_literal(v: int, dtype: DataType, span: Span) -> Expr:
    """The integer `v` as a constant of `dtype` at `span`; a value the dtype cannot hold is an error."""
    if not dtype.holds(v):
        raise ParserTypeError(f"integer literal {v} is out of the range of {dtype.name}")
    return ConstInt(v, dtype, span)


def _describe(v: Any) -> str:
    from ..ir.types import describe_value

    return describe_value(v)


def _items(item: Any) -> tuple[Any, ...]:
    return item if isinstance(item, tuple) else (item,)


def _need_dtype(v: Any, what: str) -> DataType:
    if not isinstance(v, DataType):
        raise ParserTypeError(f"{what} needs a dtype such as pl.FP32, got {_describe(v)}")
    return v


class Operators(NamedTuple):
    """What DSL values build IR with (operators, subscripts, dynamic `.shape` dims, array and
    tuple items), from `dispatch`. `dispatch` wraps the IR it builds in the value classes, so it
    imports this module and hands these over with `register_operators` when imported
    (`plang.language` imports it), not through an import back (a cycle)."""

    binary: Callable[[str, Any, Any], Any]
    unary: Callable[[str, Any], Any]
    subscript: Callable[[ShapedValue, Any], DSLValue]
    dynamic_dim: Callable[[ShapedValue, int, Expr], Any]
    call_op: Callable[[str, Sequence[Any], dict[str, Any]], DSLValue]
    current_span: Callable[[], Span]


_ops: Operators


def register_operators(ops: Operators) -> None:
    """Called once by `dispatch` at import (see `Operators`)."""
    global _ops
    _ops = ops


class DSLValue:
    """An IR expression seen from DSL code (what `x` is while the parser evaluates `x + 1`)."""

    __slots__ = ("_expr",)
    __hash__ = object.__hash__

    def __init__(self, expr: Expr) -> None:
        self._expr = expr

    def unwrap(self) -> Expr:
        """The underlying IR expression."""
        return self._expr

    @property
    def type(self) -> Type:
        return self._expr.type

    def __bool__(self) -> bool:
        raise ParserTypeError(
            "a DSL value has no Python truth value at parse time",
            hint="use it in an `if`/`pl.cond` condition of the DSL body, or compare it explicitly",
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._expr!r}>"

    # Python operators; `dispatch` decides between tile / tensor ops and scalar expressions.
    def _bin(self, name: str, other: Any, reflected: bool = False) -> DSLValue:
        return _ops.binary(name, other, self) if reflected else _ops.binary(name, self, other)

    def __add__(self, o):
        return self._bin("add", o)

    def __radd__(self, o):
        return self._bin("add", o, True)

    def __sub__(self, o):
        return self._bin("sub", o)

    def __rsub__(self, o):
        return self._bin("sub", o, True)

    def __mul__(self, o):
        return self._bin("mul", o)

    def __rmul__(self, o):
        return self._bin("mul", o, True)

    def __truediv__(self, o):
        return self._bin("div", o)

    def __rtruediv__(self, o):
        return self._bin("div", o, True)

    def __floordiv__(self, o):
        return self._bin("floordiv", o)

    def __rfloordiv__(self, o):
        return self._bin("floordiv", o, True)

    def __mod__(self, o):
        return self._bin("mod", o)

    def __rmod__(self, o):
        return self._bin("mod", o, True)

    def __pow__(self, o):
        return self._bin("pow", o)

    def __rpow__(self, o):
        return self._bin("pow", o, True)

    def __eq__(self, o):
        return self._bin("eq", o)  # type: ignore[override]

    def __ne__(self, o):
        return self._bin("ne", o)  # type: ignore[override]

    def __lt__(self, o):
        return self._bin("lt", o)

    def __le__(self, o):
        return self._bin("le", o)

    def __gt__(self, o):
        return self._bin("gt", o)

    def __ge__(self, o):
        return self._bin("ge", o)

    def __neg__(self):
        return _ops.unary("neg", self)


class ShapedValue(DSLValue):
    __slots__ = ()

    @property
    def dtype(self) -> DataType:
        return self.type.dtype

    @property
    def shape(self) -> list[Any]:
        """Static dims as ints; a dynamic dim as a scalar (`pl.tensor.dim` on tensors)."""
        return [
            dim_value(d) if dim_value(d) is not None else _ops.dynamic_dim(self, i, d)
            for i, d in enumerate(self.type.shape)
        ]

    def __getitem__(self, key: Any) -> DSLValue:
        return _ops.subscript(self, key)


class Tensor(_LegacyCall, ShapedValue):
    """A DDR tensor: `pl.Tensor[[dims], dtype]` or `pl.Tensor[[dims], dtype, layout]`."""

    __slots__ = ()

    def __class_getitem__(cls, item: Any) -> TypeSpec:
        return tensor_spec(_items(item), TensorType, "pl.Tensor")

    @property
    def layout(self) -> TensorLayout:
        return self.type.layout

    def bind_dynamic(self, dim: int, var: Any) -> None:
        """Marks a dim dynamic for `@pl.jit` specialization; no IR of its own."""


def tensor_spec(parts: tuple[Any, ...], ctor: type[TensorType], spelling: str) -> TypeSpec:
    """`[shape, dtype]`, `[shape, dtype, layout | pl.TensorView(..) | pl.MemRef(..)]` or
    `[shape, dtype, layout | pl.TensorView(..), pl.MemRef(..)]` as a tensor type."""
    if len(parts) not in (2, 3, 4):
        raise ParserTypeError(
            f"{spelling} takes [shape, dtype], [shape, dtype, layout_or_view_or_memref] or "
            f"[shape, dtype, layout_or_view, memref], got {len(parts)} items"
        )
    layout, view, memref = TensorLayout.ND, None, None
    extras = list(parts[2:])
    if extras and isinstance(extras[-1], MemRef):
        memref = extras.pop().memref
    if extras:
        third = extras.pop()
        if isinstance(third, TensorView):
            layout, view = third.layout, third.view
        elif isinstance(third, TensorLayout):
            layout = third
        else:
            raise ParserTypeError(
                f"{spelling} layout must be a TensorLayout such as pl.NZ or a pl.TensorView(..), "
                f"got {_describe(third)}"
            )
    return TypeSpec(ctor(_dims(parts[0]), _need_dtype(parts[1], spelling), layout, view, memref))


class Tile(_LegacyCall, ShapedValue):
    """An on-chip tile: `pl.Tile[[dims], dtype(, memory_space)(, pl.TileView(..))]`."""

    __slots__ = ()

    def __class_getitem__(cls, item: Any) -> TypeSpec:
        parts = _items(item)
        if len(parts) < 2:
            raise ParserTypeError("pl.Tile takes [shape, dtype, optional memory space, optional TileView]")
        mem, view, memref = None, None, None
        for extra in parts[2:]:
            if isinstance(extra, MemorySpace) and mem is None:
                mem = extra
            elif isinstance(extra, TileView) and view is None:
                view = extra
            elif isinstance(extra, MemRef) and memref is None:
                memref = extra.memref
            else:
                raise ParserTypeError(
                    f"unexpected pl.Tile annotation item {_describe(extra)}",
                    hint="write pl.Tile[[rows, cols], dtype, pl.MemRef(..), pl.Mem.Vec, pl.TileView(..)]",
                )
        return TypeSpec(
            TileType(
                _dims(parts[0]),
                _need_dtype(parts[1], "pl.Tile"),
                mem,
                None if view is None else view.valid_shape,
                None if view is None else view.view,
                memref,
            )
        )

    @property
    def memory_space(self) -> MemorySpace | None:
        return self.type.memory_space


class Scalar(_LegacyCall, DSLValue):
    """A scalar value: `pl.Scalar[pl.INT32]`."""

    __slots__ = ()

    def __class_getitem__(cls, item: Any) -> TypeSpec:
        return TypeSpec(ScalarType(_need_dtype(item, "pl.Scalar")))

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


class TupleValue(DSLValue):
    """A tuple-typed IR value (multi-result calls); index it or unpack it."""

    __slots__ = ()

    def __len__(self) -> int:
        return len(self.type.types)

    def __getitem__(self, index: Any) -> DSLValue:
        from ..ir.expr import TupleGetItem

        if isinstance(index, bool) or not isinstance(index, int):
            raise ParserTypeError(f"a tuple index must be an int literal, got {_describe(index)}")
        if not -len(self) <= index < len(self):
            raise ParserTypeError(f"tuple index {index} out of range for a {len(self)}-tuple")
        return wrap(TupleGetItem(self._expr, index % len(self), _ops.current_span()))


class Tuple:
    """Annotation only: `pl.Tuple[T1, T2]` is one tuple-typed value."""

    def __class_getitem__(cls, item: Any) -> TypeSpec:
        return TypeSpec(TupleType([annotation_type(t) for t in _items(item)]))


class Array(DSLValue):
    """A small on-core array of scalars: `pl.Array[16, pl.INT32]`."""

    __slots__ = ()

    def __class_getitem__(cls, item: Any) -> TypeSpec:
        parts = _items(item)
        if len(parts) != 2 or isinstance(parts[0], bool) or not isinstance(parts[0], int):
            raise ParserTypeError("pl.Array takes [extent, dtype] with an int extent")
        return TypeSpec(ArrayType(parts[0], _need_dtype(parts[1], "pl.Array")))

    def __getitem__(self, index: Any) -> DSLValue:
        return _ops.call_op("array.get_element", (self, index), {})


class Ptr:
    """Annotation only: an opaque pointer (`pl.Ptr`)."""


class _Direction:
    direction = ParamDirection.In

    def __class_getitem__(cls, item: Any) -> Any:
        if isinstance(item, type) and issubclass(item, Tensor):
            return cls  # `pl.Out[pl.Tensor]` / `pl.Out[pld.DistributedTensor]`: shape from the call
        if not isinstance(item, TypeSpec) or item.direction is not ParamDirection.In:
            raise ParserTypeError(f"pl.{cls.__name__}[...] wraps a type such as pl.Tensor[[64], pl.FP32]")
        return TypeSpec(item.type, cls.direction)


class Out(_Direction):
    """Parameter direction: the function writes this argument."""

    direction = ParamDirection.Out


class InOut(_Direction):
    """Parameter direction: the function reads and writes this argument."""

    direction = ParamDirection.InOut


class DynVar(Scalar):
    """A dynamic dimension created by `pl.dynamic("M")`; one IR `Var` per DynVar."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise ParserTypeError(f"pl.dynamic needs an identifier name, got {name!r}")
        super().__init__(Var(name, ScalarType(INDEX)))
        self.name = name

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"


def dynamic(name: str) -> DynVar:
    """A dynamic dimension usable in shape annotations: `M = pl.dynamic("M")`."""
    return DynVar(name)


TaskId = Scalar[TASK_ID]
Unknown = TypeSpec(UnknownType())
"""`pl.Unknown`: the annotation of a value whose type is not known (printed IR only)."""
PrefetchAsyncContext = TypeSpec(AsyncHandleType("PrefetchAsyncContext"))
"""`pl.PrefetchAsyncContext`: the annotation of a prefetch context (`pl.prefetch.make_context()`)."""
AsyncEvent = TypeSpec(AsyncHandleType("AsyncEvent"))
"""`pl.AsyncEvent`: the annotation of an in-flight prefetch (`pl.prefetch.async_prefetch`)."""
AsyncSession = TypeSpec(AsyncHandleType("AsyncSession"))
"""`pl.AsyncSession`: the annotation of a prefetch context's session (`pl.prefetch.session`)."""
IntLike = int | Scalar | Expr
"""`pl.IntLike`: a type hint for Python helpers taking an index (a Python int, a DSL scalar
or an IR expression)."""


def annotation_type(obj: Any) -> Type:
    """The IR type an annotation object stands for."""
    return annotation_spec(obj).type


def annotation_spec(obj: Any) -> TypeSpec:
    if isinstance(obj, TypeSpec):
        return obj
    if obj is Ptr:
        return TypeSpec(PtrType())
    if obj in (Tensor, Tile, Scalar, Array, Tuple):
        raise ParserTypeError(
            f"bare pl.{obj.__name__} annotation has no shape or dtype",
            hint=f"write pl.{obj.__name__}[...] with its shape and dtype",
        )
    raise ParserTypeError(
        f"{_describe(obj)} is not a DSL type annotation",
        hint="use pl.Tensor[[..], dtype], pl.Tile[..], pl.Scalar[dtype], ...",
    )


_WRAPPERS: dict[type, type[DSLValue]] = {
    TensorType: Tensor,
    ir_types.DistributedTensorType: Tensor,
    TileType: Tile,
    ScalarType: Scalar,
    TupleType: TupleValue,
    ArrayType: Array,
}


def wrap(expr: Expr) -> DSLValue:
    """The DSL value class matching an expression's type."""
    return _WRAPPERS.get(type(expr.type), DSLValue)(expr)
