"""The seed's tensor factories: NumPy-like helpers returning torch CPU tensors, which the
simulated chip reads in place. ``device="npu"`` and ``"cpu"`` both mean host memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .dtype import torch_dtype

_DEVICES = ("npu", "cpu", None)


def _dt(dtype: Any, default: Any = np.float32) -> torch.dtype:
    return torch_dtype(default if dtype is None else dtype)


def _check(device: Any) -> None:
    if device not in _DEVICES:
        raise ValueError(f"device must be 'npu' or 'cpu' (both host memory on the CPU chip), got {device!r}")


def tensor(data: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    """A tensor holding a copy of `data` (array, list, tensor)."""
    _check(device)
    out = data.detach().clone() if isinstance(data, torch.Tensor) else torch.from_numpy(np.array(data))
    return out if dtype is None else out.to(_dt(dtype))


def zeros(shape: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    _check(device)
    return torch.zeros(shape, dtype=_dt(dtype))


def ones(shape: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    _check(device)
    return torch.ones(shape, dtype=_dt(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    _check(device)
    return torch.full(shape if isinstance(shape, (tuple, list)) else (shape,), fill_value,
                      dtype=torch_dtype(dtype) if dtype is not None else None)


def zeros_like(t: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    _check(device)
    ref = t if isinstance(t, torch.Tensor) else torch.as_tensor(np.asarray(t))
    return torch.zeros(ref.shape, dtype=_dt(dtype, ref.dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None,
           device: Any = "npu") -> torch.Tensor:
    """NumPy's ``arange`` (its dtype inference: integers give int64) as a torch tensor."""
    _check(device)
    array = np.arange(start, stop, step) if stop is not None else np.arange(start)
    if dtype is not None:
        return torch.from_numpy(array).to(_dt(dtype))
    return torch.from_numpy(array)


def rand(*shape: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    """Uniform values on [0, 1)."""
    _check(device)
    dims = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return torch.rand(tuple(dims), dtype=torch.float32).to(_dt(dtype))


def randint(low: int, high: int, shape: Any, dtype: Any = None, device: Any = "npu") -> torch.Tensor:
    """Integers on [low, high) (int64 unless `dtype` says otherwise)."""
    _check(device)
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    return torch.randint(low, high, tuple(dims), dtype=_dt(dtype, torch.int64))
