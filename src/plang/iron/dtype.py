"""Element types of a design: `np.ndarray[(shape), np.dtype[T]]` object types, the seed's
`str_to_dtype` / `dtype_to_str`, and their torch equivalents."""

from __future__ import annotations

import math
from typing import Any, get_args, get_origin

import numpy as np
import torch

from ..dtypes import DataType

try:
    from ml_dtypes import bfloat16
except ImportError:  # pragma: no cover - ml_dtypes ships with plang's dependencies
    bfloat16 = None

_BY_NAME = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
            "u16": np.uint16, "u32": np.uint32, "f32": np.float32, "f64": np.float64}
if bfloat16 is not None:
    _BY_NAME["bf16"] = bfloat16
_TO_TORCH = {np.dtype(np.int8): torch.int8, np.dtype(np.int16): torch.int16,
             np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64,
             np.dtype(np.uint8): torch.uint8, np.dtype(np.uint16): torch.uint16,
             np.dtype(np.uint32): torch.uint32, np.dtype(np.float16): torch.float16,
             np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
             np.dtype(np.bool_): torch.bool}
if bfloat16 is not None:
    _TO_TORCH[np.dtype(bfloat16)] = torch.bfloat16
_FROM_TORCH = {v: k for k, v in _TO_TORCH.items()}


def str_to_dtype(name: str) -> Any:
    """The NumPy scalar type of a short name: ``"i32"`` -> ``np.int32``, ``"bf16"`` -> bfloat16."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unrecognized dtype: {name}") from None


def dtype_to_str(dtype: Any) -> str:
    """The short name of a NumPy scalar type or dtype: ``np.int32`` -> ``"i32"``."""
    try:
        want = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"Unrecognized dtype: {dtype}") from None
    for name, scalar in _BY_NAME.items():
        if np.dtype(scalar) == want:
            return name
    raise ValueError(f"Unrecognized dtype: {dtype}")


def np_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a NumPy type, dtype, torch dtype, plang DataType or short name."""
    if isinstance(dtype, DataType):
        dtype = dtype.to_torch()
    if isinstance(dtype, torch.dtype):
        try:
            return _FROM_TORCH[dtype]
        except KeyError:
            raise TypeError(f"torch dtype {dtype} has no NumPy equivalent here") from None
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return np.dtype(_BY_NAME[dtype])
    return np.dtype(dtype)


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a NumPy type / dtype / torch dtype / short name."""
    if isinstance(dtype, torch.dtype):
        return dtype
    want = np_dtype(dtype)
    try:
        return _TO_TORCH[want]
    except KeyError:
        raise TypeError(f"dtype {want} has no torch equivalent") from None


def obj_type_of(obj_type: Any) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of an object type: ``np.ndarray[(16,), np.dtype[np.int32]]`` or anything
    with ``shape`` and ``dtype`` (an `In` / `Out` operand of a generator, a tensor)."""
    if get_origin(obj_type) is np.ndarray:
        shape, dt = get_args(obj_type)
        args = get_args(dt)
        if not args:
            raise TypeError(f"object type {obj_type} needs an element dtype: "
                            "np.ndarray[(n,), np.dtype[np.int32]]")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return _int_shape(shape, obj_type), np.dtype(args[0])
    shape, dtype = getattr(obj_type, "shape", None), getattr(obj_type, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(f"expected an object type such as np.ndarray[(16,), np.dtype[np.int32]], "
                        f"got {obj_type!r}")
    return _int_shape(tuple(shape), obj_type), np_dtype(dtype)


def _int_shape(shape: tuple, what: Any) -> tuple[int, ...]:
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise TypeError(f"object type {what}: every dimension must be a positive integer, "
                            f"got {shape}")
    return tuple(int(d) for d in shape)


def nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    return math.prod(shape) * dtype.itemsize
