"""Operands: `In`, `Out` and `InOut`, the tensors an operator (or a design generator) takes.

Declared in a class body they capture the operator's parameters (``x = In(M, N,
obj_shape=(rows, N))``); bound to an operator (``op.x``, ``op.bound["x"]``) the same object
reads its dims through it: `shape`, `dtype`, `obj_shape`, `ndarray_type`. An operand whose
dims are integers (``In(1024, dtype=np.float32)``) is concrete without an operator.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import Any

import numpy as np

from ..dtypes import BF16, DataType
from .params import OperatorParam, Select


def as_data_type(dtype: Any) -> DataType:
    """A plang `DataType` from a plang, NumPy, ml_dtypes or torch dtype."""
    if isinstance(dtype, DataType):
        return dtype
    if type(dtype).__module__ == "torch":
        return DataType.from_torch(dtype)
    try:
        return DataType.from_numpy(dtype)
    except TypeError:
        raise TypeError(f"{dtype!r} is no dtype plang knows (give a plang, NumPy or torch dtype)") from None


def _as_tuple(value: Any) -> tuple | None:
    if value is None:
        return None
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _dim_text(d: Any) -> str:
    if isinstance(d, Select):
        return f"Select({d.flag!r}, {d.when_true!r}, {d.when_false!r})"
    return repr(d)


class Operand:
    """A runtime tensor operand (`In`, `Out` and `InOut` take the same arguments).

    dims: the host shape: integers, ``param()``\\ s and `Select`\\ s; a ``param()`` that is None
    on an instance is a dimension the shape leaves out there. dtype: the element type (plang,
    NumPy or torch), or a ``param()`` holding it. obj_shape: the tile one core step loads (one
    ObjectFifo element); with one the tensor is streamed. per: the ``param()`` (or several,
    multiplied) the stream is split over: SPMD blocks / lanes. depth: the pipeline / fifo depth.
    replicate: every `per` lane gets the whole tensor, not a share. when: a bool ``param()``;
    the tensor exists only where it is true. like: an input whose dims these are; a call gives
    this tensor the shape that input has on the call.
    """

    fills = True  # the caller supplies its data (In, InOut)

    def __init__(self, *dims: Any, dtype: Any = BF16, obj_shape: Any = None, per: Any = None,
                 depth: int = 2, replicate: bool = False, when: OperatorParam | None = None,
                 like: Operand | None = None) -> None:
        if replicate and per is None:
            raise TypeError("replicate=True needs per=<dim>: every lane receives the whole tensor")
        if like is not None and dims:
            raise TypeError(f"give dims {dims} or like={like!r}, not both")
        if like is not None and not isinstance(like, Operand):
            raise TypeError(f"like= takes an operand of this operator, got {like!r}")
        if when is not None and not isinstance(when, OperatorParam):
            raise TypeError(f"when= takes a bool param() of this operator, got {when!r}")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth={depth!r}: an operand's depth is an integer >= 1")
        self.like = like
        self.dims = dims if like is None else like.dims
        self.declared_dtype = dtype
        self.obj_dims = _as_tuple(obj_shape)
        self.per = _as_tuple(per)
        self.depth = depth
        self.replicate = replicate
        self.when = when
        self.name = ""
        self._op: Any = None

    # ------------------------------------------------------------ declaration
    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        bound = obj.bound
        if self.name not in bound:
            raise AttributeError(f"{type(obj).__name__}.{self.name} is no operand of this operator "
                                 f"({self.when!r} is false)")
        return bound[self.name]

    @property
    def streamed(self) -> bool:
        """It streams into the cores in `obj_shape` pieces."""
        return self.obj_dims is not None

    @property
    def direction(self) -> str:
        """``"In"``, ``"Out"`` or ``"InOut"``."""
        return type(self).__name__

    def of(self, op: Any) -> Operand:
        """This operand bound to `op`: its dims read through it."""
        bound = copy.copy(self)
        bound._op = op
        bound.__dict__.pop("torch_dtype", None)  # read through `op` from now on
        return bound

    # ------------------------------------------------------------ values
    def _value(self, d: Any) -> Any:
        if isinstance(d, OperatorParam):
            if self._op is None:
                raise TypeError(f"{self!r} reads {d.name}: bind it to an operator (op.{self.name})")
            return getattr(self._op, d.name)
        return d

    def _expand(self, dims: tuple) -> tuple[int, ...]:
        out: list[int] = []
        for d in dims:
            if isinstance(d, Select):
                if self._op is None:
                    raise TypeError(f"{self!r} selects its shape by {d.flag.name}: bind it to an operator")
                out.extend(self._expand(d.branch(self._op)))
                continue
            v = self._value(d)
            if v is not None:
                out.append(int(v))
        return tuple(out)

    @property
    def shape(self) -> tuple[int, ...]:
        """The host shape on the bound operator (a None dimension left out)."""
        return self._expand(self.dims)

    @property
    def obj_shape(self) -> tuple[int, ...] | None:
        """The tile one core step loads, or None for an operand that is not streamed."""
        return None if self.obj_dims is None else self._expand(self.obj_dims)

    @property
    def lanes(self) -> int:
        """How many ways `per=` splits the stream (1 without one)."""
        return 1 if self.per is None else math.prod(int(self._value(p)) for p in self.per)

    @property
    def dtype(self) -> DataType:
        """The element type as a plang `DataType`."""
        return as_data_type(self._value(self.declared_dtype))

    @functools.cached_property
    def torch_dtype(self) -> Any:
        """`dtype` as a torch dtype (read once: the operator an operand is bound to is
        immutable; a call checks every tensor against it)."""
        return self.dtype.to_torch()

    @property
    def ndarray_type(self) -> Any:
        """``np.ndarray[shape, np.dtype[T]]`` of the whole tensor."""
        return np.ndarray[self.shape, np.dtype[self.dtype.to_numpy().type]]

    @property
    def obj_type(self) -> Any:
        """``np.ndarray[obj_shape, np.dtype[T]]`` of one element, or None if not streamed."""
        shape = self.obj_shape
        return None if shape is None else np.ndarray[shape, np.dtype[self.dtype.to_numpy().type]]

    def numel(self) -> int:
        """Elements of the whole tensor."""
        return math.prod(self.shape)

    def __repr__(self) -> str:
        args = [_dim_text(d) for d in self.dims] if self.like is None else [f"like={self.like.name}"]
        if self.declared_dtype is not BF16:
            d = self.declared_dtype
            args.append(f"dtype={d!r}" if isinstance(d, OperatorParam) else f"dtype={as_data_type(d)!r}")
        for key, value, default in (("obj_shape", self.obj_dims, None), ("per", self.per, None),
                                    ("depth", self.depth, 2), ("replicate", self.replicate, False),
                                    ("when", self.when, None)):
            if value != default:
                shown = value[0] if isinstance(value, tuple) and len(value) == 1 else value
                args.append(f"{key}={shown!r}")
        return f"{type(self).__name__}({', '.join(args)})"


class In(Operand):
    """Runtime input tensor (host to chip, each call); takes `Operand`'s arguments."""


class Out(Operand):
    """Runtime output tensor (chip to host, each call); takes `Operand`'s arguments."""

    fills = False


class InOut(Operand):
    """Runtime bidirectional tensor (both directions each call); takes `Operand`'s arguments."""
