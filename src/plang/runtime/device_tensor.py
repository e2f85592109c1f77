"""`DeviceTensor`: a tensor in the simulated chip's DDR (a torch CPU tensor underneath)."""

from __future__ import annotations

from typing import Any

import torch

from ..dtypes import DataType


class DeviceTensor:
    """A DDR tensor owned by a `ChipWorker`. Interchangeable with torch CPU tensors as a
    kernel or program argument; `.torch()` gives the zero-copy torch view."""

    __slots__ = ("_tensor", "_owner", "__weakref__")

    def __init__(self, tensor: torch.Tensor, owner: Any = None) -> None:
        self._tensor: torch.Tensor | None = tensor
        self._owner = owner

    def torch(self) -> torch.Tensor:
        if self._tensor is None:
            raise RuntimeError("DeviceTensor was freed")
        return self._tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.torch().shape)

    @property
    def dtype(self) -> DataType:
        return DataType.from_torch(self.torch().dtype)

    @property
    def data_ptr(self) -> int:
        """The address of its first byte in the chip's memory (the host's, on the simulated chip)."""
        return self.torch().data_ptr()

    @property
    def nbytes(self) -> int:
        t = self.torch()
        return t.numel() * t.element_size()

    @property
    def freed(self) -> bool:
        return self._tensor is None

    def _release(self) -> None:
        self._tensor = None

    def __repr__(self) -> str:
        if self._tensor is None:
            return "DeviceTensor(<freed>)"
        return f"DeviceTensor(shape={self.shape}, dtype={self.dtype})"


def as_torch(value: Any) -> Any:
    """The torch tensor behind a `DeviceTensor`; anything else unchanged."""
    return value.torch() if isinstance(value, DeviceTensor) else value
