"""IR types: scalars, DDR tensors, on-chip tiles, tuples, arrays, pointers, and the placement
metadata a tensor or tile annotation may carry (`MemRef`, `TensorView`, `TileView`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..dtypes import INDEX, DataType
from .enums import MemorySpace, PadValue, TensorLayout, TileLayout
from .node import Node, as_python, node

if TYPE_CHECKING:
    from .expr import ConstInt, Expr

Shape = tuple["Expr", ...]

_Expr: type[Expr]
_ConstInt: type[ConstInt]


def register_dim_classes(expr: type[Expr], const_int: type[ConstInt]) -> None:
    """Install `Expr` and `ConstInt`, which dimensions are made of (an int dim becomes a
    `ConstInt`). `expr` imports this module (every expression has a type), so it hands them
    over through this hook when imported, not through an import back (a cycle)."""
    global _Expr, _ConstInt
    _Expr, _ConstInt = expr, const_int


def as_dim(d: Any) -> Expr:
    """An int or integer `Expr` as a shape dimension expression."""
    if isinstance(d, bool):
        raise TypeError(f"shape dimension must be an integer, got {d!r}")
    if isinstance(d, int):
        return _ConstInt(d, INDEX)
    if isinstance(d, _Expr):
        return d
    raise TypeError(f"shape dimension must be an integer, got {type(d).__name__} {d!r}")


def as_shape(dims: Sequence[Any]) -> Shape:
    return tuple(as_dim(d) for d in dims)


def dim_value(d: Expr) -> int | None:
    """The static value of a dimension, or None when it is dynamic."""
    return d.value if isinstance(d, _ConstInt) else None


def static_shape(shape: Shape) -> tuple[int, ...] | None:
    """All dims as ints, or None when any is dynamic."""
    vals = tuple(dim_value(d) for d in shape)
    return None if any(v is None for v in vals) else vals  # type: ignore[return-value]


def dims_equal(a: Expr, b: Expr) -> bool:
    """Two dims are provably equal (same constant or the same variable)."""
    va, vb = dim_value(a), dim_value(b)
    if va is not None or vb is not None:
        return va == vb
    return a is b or (getattr(a, "name", None) is not None and getattr(a, "name", 0) == getattr(b, "name", 1))


def shapes_equal(a: Shape, b: Shape) -> bool:
    return len(a) == len(b) and all(dims_equal(x, y) for x, y in zip(a, b))


def format_shape(shape: Shape) -> str:
    return "[" + ", ".join(as_python(d) for d in shape) + "]"


class Type(Node):
    __slots__ = ()


@node
class ScalarType(Type):
    dtype: DataType


@node
class ShapedType(Type):
    """Common base of tensors and tiles: `shape` and `dtype`."""

    shape: Shape
    dtype: DataType

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        return static_shape(self.shape)

    @property
    def nbytes(self) -> int | None:
        s = self.static_shape
        if s is None:
            return None
        n = 1
        for d in s:
            n *= d
        return (n * self.dtype.bits + 7) // 8


@node
class MemRef(Node):
    """Where a tensor or tile lives: `pl.MemRef(base, byte_offset, size)` names a base
    allocation (a string, or a `pl.Ptr` variable from `pl.tile.alloc`) and a byte range of it;
    `pl.MemRef("name")` declares an allocation of its own (offset and size unset). `slots` /
    `slot` pick one of `slots` equal parts. Placement only: the CPU backend allocates itself."""

    base: Any
    byte_offset: Expr | None = None
    size: int | None = None
    slots: int = 1
    slot: Expr | None = None


@node
class TensorView(Node):
    """Strides and valid region of a DDR tensor (`pl.TensorView(stride=.., valid_shape=..,
    layout=.., pad=..)`); the layout lives on the `TensorType`."""

    stride: Shape = ()
    valid_shape: Shape | None = None
    pad: PadValue = PadValue.null

    def __init__(self, stride: Sequence[Any] = (), valid_shape: Sequence[Any] | None = None,
                 pad: PadValue = PadValue.null) -> None:
        self._set(None, stride=as_shape(stride),
                  valid_shape=None if valid_shape is None else as_shape(valid_shape), pad=pad)

    @property
    def is_default(self) -> bool:
        return not self.stride and self.valid_shape is None and self.pad is PadValue.null


@node
class TileView(Node):
    """A tile's on-chip layout (`pl.TileView(blayout=.., slayout=.., fractal=.., pad=..,
    stride=.., start_offset=..)`); its valid region is `TileType.valid_shape`. None fields
    take the target's defaults; none of them changes a tile's values."""

    blayout: TileLayout | None = None
    slayout: TileLayout | None = None
    fractal: int | None = None
    pad: PadValue = PadValue.null
    stride: Shape = ()
    start_offset: Expr | None = None

    def __init__(self, blayout: TileLayout | None = None, slayout: TileLayout | None = None,
                 fractal: int | None = None, pad: PadValue = PadValue.null,
                 stride: Sequence[Any] = (), start_offset: Any = None) -> None:
        self._set(None, blayout=blayout, slayout=slayout, fractal=fractal, pad=pad,
                  stride=as_shape(stride),
                  start_offset=None if start_offset is None else as_dim(start_offset))

    @property
    def is_default(self) -> bool:
        return (self.blayout is None and self.slayout is None and self.fractal is None
                and self.pad is PadValue.null and not self.stride and self.start_offset is None)


def _view(view: Any) -> Any:
    return None if view is None or view.is_default else view


@node
class TensorType(ShapedType):
    """A tensor in DDR (global memory)."""

    layout: TensorLayout
    view: TensorView | None
    memref: MemRef | None

    def __init__(self, shape: Sequence[Any], dtype: DataType,
                 layout: TensorLayout = TensorLayout.ND, view: TensorView | None = None,
                 memref: MemRef | None = None) -> None:
        self._set(None, shape=as_shape(shape), dtype=dtype, layout=layout, view=_view(view),
                  memref=memref)


@node
class DistributedTensorType(TensorType):
    """A tensor backed by this rank's slice of a window buffer shared by every rank
    (`pld.DistributedTensor[...]`); a `TensorType` to every tensor op."""

    def __init__(self, shape: Sequence[Any], dtype: DataType,
                 layout: TensorLayout = TensorLayout.ND, view: TensorView | None = None,
                 memref: MemRef | None = None) -> None:
        TensorType.__init__(self, shape, dtype, layout, view, memref)


@node
class TileType(ShapedType):
    """An on-chip tile; `valid_shape` is the region holding real data (None = whole tile)."""

    memory_space: MemorySpace | None
    valid_shape: Shape | None
    view: TileView | None
    memref: MemRef | None

    def __init__(self, shape: Sequence[Any], dtype: DataType,
                 memory_space: MemorySpace | None = None,
                 valid_shape: Sequence[Any] | None = None, view: TileView | None = None,
                 memref: MemRef | None = None) -> None:
        shp = as_shape(shape)
        vs = None if valid_shape is None else as_shape(valid_shape)
        if vs is not None and shapes_equal(vs, shp):
            vs = None
        self._set(None, shape=shp, dtype=dtype, memory_space=memory_space, valid_shape=vs,
                  view=_view(view), memref=memref)

    @property
    def effective_valid_shape(self) -> Shape:
        return self.shape if self.valid_shape is None else self.valid_shape


@node
class TupleType(Type):
    types: tuple[Type, ...]


@node
class ArrayType(Type):
    """A small on-core array of scalars (`pl.Array[n, dtype]`)."""

    extent: int
    dtype: DataType


class PtrType(Type):
    __slots__ = ()


class CommCtxType(Type):
    """The communication context of a distributed tensor (`pld.CommCtx`)."""

    __slots__ = ()


@node
class AsyncHandleType(Type):
    """An opaque handle of the asynchronous prefetch family (`pl.prefetch.*`): `kind` is
    `PrefetchAsyncContext`, `AsyncEvent` or `AsyncSession` (`pl.<kind>` in annotations)."""

    kind: str


class UnknownType(Type):
    __slots__ = ()


def describe_type(t: Type) -> str:
    """A short user-facing rendering, e.g. `Tile[[64, 64], FP32]`."""
    return as_python(t).replace("pl.", "")


def describe_value(v: Any) -> str:
    """A short user-facing rendering of a value a DSL operand position received: an IR value by
    its type, a Python value by its kind and repr (only its kind when the repr is the default
    `<... object at 0x...>`, or the value's own `dsl_description`)."""
    if hasattr(v, "type") and isinstance(v.type, Type):
        return describe_type(v.type)
    own = getattr(v, "dsl_description", None)
    if isinstance(own, str):
        return own
    text = repr(v)
    if " object at 0x" in text:
        return f"a Python {type(v).__name__} object"
    return f"{type(v).__name__} {text}"
