"""Binding a `@pl.jit` call's arguments to its parameters: checks and the specialization key.

`bind` validates every tensor's rank, static dims and dtype against the annotation (raising
`TypeError` naming the parameter, the expected and the actual value) before anything is
compiled, and returns a `Binding` whose `key` identifies the specialization: static shapes,
dtypes and specialized scalar values; dynamic dims and `pl.RUNTIME` scalars are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DataType
from .signature import RUNTIME, ParamSpec, describe_dims, is_dynvar


@dataclass(frozen=True)
class TensorShape:
    """A tensor parameter's specialized shape: each dim an int or a DynVar name."""

    dims: tuple[int | str, ...]
    dtype: DataType


@dataclass(frozen=True)
class Binding:
    tensors: dict[str, TensorShape]
    scalars: dict[str, Any]  # value, or RUNTIME
    dynamic_values: dict[str, int]  # DynVar name -> extent in this call (empty in signature mode)
    key: tuple


def tensor_meta(value: Any) -> tuple[tuple[int, ...], DataType] | None:
    """(shape, dtype) of a torch tensor / DeviceTensor, or None for anything else."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None or isinstance(value, (int, float, bool)):
        return None
    if not isinstance(dtype, DataType):
        dtype = DataType.from_torch(dtype)
    return tuple(int(d) for d in shape), dtype


def bind(fname: str, specs: list[ParamSpec], dynamic: dict[str, dict[int, Any]],
         args: tuple, kwargs: dict[str, Any], call: bool = False) -> Binding:
    """Bind call arguments (or, with no tensor given at all, the annotations alone).

    `pl.RUNTIME` leaves a scalar unspecialized in `compile` / `lower` / `specialize`, with or
    without example tensors; a `call` needs every scalar's value."""
    names = [s.name for s in specs]
    if len(args) > len(specs):
        plural = "argument" if len(specs) == 1 else "arguments"
        raise TypeError(f"{fname}() takes {len(specs)} {plural} ({', '.join(names)}), got {len(args)}")
    values: dict[str, Any] = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{fname}() got an unexpected keyword argument {k!r}")
        if k in values:
            raise TypeError(f"{fname}() got multiple values for argument {k!r}")
        values[k] = v
    signature_mode = not any(tensor_meta(v) is not None for v in values.values())
    tensors: dict[str, TensorShape] = {}
    scalars: dict[str, Any] = {}
    dyn_values: dict[str, int] = {}
    for spec in specs:
        from_signature = signature_mode and spec.kind == "tensor"
        if spec.name not in values and spec.default is None and not from_signature:
            raise TypeError(f"{fname}() missing argument {spec.name!r}")
        value = values.get(spec.name, spec.default)
        if spec.kind == "tile":
            raise TypeError(f"{fname}(): parameter {spec.name!r} is a tile; tiles live on chip and can "
                            f"only be passed between DSL functions, not from Python")
        if spec.kind == "scalar":
            scalars[spec.name] = _scalar(fname, spec, value, call)
        else:
            tensors[spec.name] = _tensor(fname, spec, dynamic.get(spec.name, {}), value, dyn_values,
                                         signature_mode)
    key = (tuple((n, t.dims, t.dtype.name) for n, t in tensors.items()),
           tuple((n, "RUNTIME" if v is RUNTIME else (type(v).__name__, v)) for n, v in scalars.items()))
    return Binding(tensors, scalars, dyn_values, key)


def _scalar(fname: str, spec: ParamSpec, value: Any, call: bool) -> Any:
    if value is RUNTIME:
        if call:
            raise TypeError(f"{fname}(): pl.RUNTIME for scalar {spec.name!r} is accepted by "
                            f"compile() / lower() / specialize(); a call needs its value")
        return RUNTIME
    if value is None:
        raise TypeError(f"{fname}(): scalar parameter {spec.name!r} needs a value or pl.RUNTIME")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
            value = value.item()
        else:
            raise TypeError(f"{fname}(): parameter {spec.name!r} expects a Python number, "
                            f"got {type(value).__name__}")
    if spec.dtype is not None and spec.dtype.is_int and not isinstance(value, int):
        raise TypeError(f"{fname}(): parameter {spec.name!r} is pl.Scalar[{spec.dtype}] and needs an int, "
                        f"got {value!r}")
    return value


def _tensor(fname: str, spec: ParamSpec, bound_dims: dict[int, Any], value: Any,
            dyn_values: dict[str, int], signature_mode: bool) -> TensorShape:
    if signature_mode and value is None:
        if not spec.fully_annotated:
            raise TypeError(f"{fname}(): compiling without tensors needs a full annotation "
                            f"pl.Tensor[[dims], dtype] on parameter {spec.name!r}")
        dims = tuple(d.name if is_dynvar(d) else int(d) for d in spec.dims)
        return TensorShape(tuple(bound_dims[i].name if i in bound_dims else d for i, d in enumerate(dims)),
                           spec.dtype)
    meta = tensor_meta(value)
    expected = f"pl.Tensor[{describe_dims(spec.dims)}, {spec.dtype}]" if spec.fully_annotated else "a tensor"
    if meta is None:
        raise TypeError(f"{fname}(): parameter {spec.name!r} expects {expected}, got {type(value).__name__}")
    shape, dtype = meta
    if spec.dtype is not None and not spec.dtype.accepts_storage(dtype):
        raise TypeError(f"{fname}(): parameter {spec.name!r} expects dtype {spec.dtype.name}, "
                        f"got {dtype.name} (tensor of shape {list(shape)})")
    if spec.dims is not None and len(spec.dims) != len(shape):
        raise TypeError(f"{fname}(): parameter {spec.name!r} expects rank {len(spec.dims)} "
                        f"{expected}, got shape {list(shape)} (rank {len(shape)})")
    dims: list[int | str] = list(shape)
    for axis, extent in enumerate(shape):
        ann = spec.dims[axis] if spec.dims is not None else None
        var = bound_dims.get(axis, ann if is_dynvar(ann) else None)
        if var is not None:
            seen = dyn_values.setdefault(var.name, extent)
            if seen != extent:
                raise TypeError(f"{fname}(): dynamic dim {var.name} is {seen} elsewhere but parameter "
                                f"{spec.name!r} has {extent} on axis {axis}")
            dims[axis] = var.name
        elif ann is not None and int(ann) != extent:
            raise TypeError(f"{fname}(): parameter {spec.name!r} expects shape {describe_dims(spec.dims)}, "
                            f"got {list(shape)} (axis {axis}: {extent} != {ann})")
    return TensorShape(tuple(dims), spec.dtype if spec.dtype is not None else dtype)
