"""`Buffer`: a named memory region of a tile a Worker reads and writes without fifo
synchronization. It is a torch tensor owned by the design, initialised from `initial_value`
and kept across calls (as a tile's memory persists on the NPU); a Worker's core function
receives the tensor."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .device import Tile
from .dtype import nbytes, obj_type_of, torch_dtype


def _check_int(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"Buffer {name} must be an int, but got {type(value)}")
    if value < 0:
        raise ValueError(f"Buffer {name} must be >= 0, but got {value}")


class Buffer:
    """Named memory region accessible by the Workers that take it."""

    def __init__(self, type: Any = None, initial_value: Any = None, name: str | None = None,
                 tile: Tile | None = None, use_write_rtp: bool = False, address: int | None = None,
                 mem_bank: int | None = None) -> None:
        if type is None and initial_value is None:
            raise ValueError("Must provide either type, initial value, or both.")
        _check_int("address", address)
        _check_int("mem_bank", mem_bank)
        if initial_value is not None:
            init = np.asarray(initial_value)
            if type is None:
                type = np.ndarray[init.shape, np.dtype[init.dtype.type]]
        self.shape, self.dtype = obj_type_of(type)
        self.type, self.name, self.tile = type, name, tile
        self.use_write_rtp, self.address, self.mem_bank = use_write_rtp, address, mem_bank
        self.tensor = torch.zeros(self.shape, dtype=torch_dtype(self.dtype))
        if initial_value is not None:
            init = np.asarray(initial_value, dtype=self.dtype)
            self.tensor.copy_(torch.from_numpy(init).reshape(self.shape))

    @property
    def nbytes(self) -> int:
        return nbytes(self.shape, self.dtype)

    def place(self, tile: Tile) -> None:
        self.tile = tile

    def tiles(self) -> list[Tile]:
        return [] if self.tile is None else [self.tile]

    def __repr__(self) -> str:
        return f"Buffer({self.name!r}, shape={self.shape}, dtype={self.dtype})"
