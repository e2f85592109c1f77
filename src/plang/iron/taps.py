"""`TensorAccessPattern`: a walk of up to 4 dimensions (sizes, strides, in elements) from an
element offset over a tensor of shape `tensor_dims`. The DMA that moves data on the NPU walks
it; here it is a `torch.as_strided` view, read (gather) or written (scatter) in one op."""

from __future__ import annotations

import math
from typing import Any, Sequence

import torch


def _ints(name: str, values: Sequence[int], minimum: int) -> tuple[int, ...]:
    out = tuple(values)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ValueError(f"TensorAccessPattern {name} must be ints >= {minimum}, got {list(out)}")
    return out


class TensorAccessPattern:
    """``TensorAccessPattern(tensor_dims, offset, sizes, strides)``."""

    def __init__(self, tensor_dims: Sequence[int], offset: int, sizes: Sequence[int],
                 strides: Sequence[int]) -> None:
        self.tensor_dims = _ints("tensor_dims", tensor_dims, 1)
        self.sizes, self.strides = _ints("sizes", sizes, 1), _ints("strides", strides, 0)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"TensorAccessPattern offset must be an int >= 0, got {offset!r}")
        self.offset = offset
        if len(self.sizes) != len(self.strides):
            raise ValueError(f"TensorAccessPattern needs one stride per size, got sizes "
                             f"{list(self.sizes)} and strides {list(self.strides)}")
        if not 1 <= len(self.sizes) <= 4:
            raise ValueError(f"TensorAccessPattern walks 1 to 4 dimensions, got {len(self.sizes)}")
        last = offset + sum((s - 1) * st for s, st in zip(self.sizes, self.strides))
        if last >= math.prod(self.tensor_dims):
            raise ValueError(f"TensorAccessPattern {self} reaches element {last} of a tensor of "
                             f"{math.prod(self.tensor_dims)} elements")

    @classmethod
    def full(cls, shape: Sequence[int]) -> TensorAccessPattern:
        """The linear walk over a whole tensor."""
        shape = tuple(shape)
        return cls(shape, 0, [math.prod(shape)], [1])

    @property
    def transfer_len(self) -> int:
        """Elements one walk moves."""
        return math.prod(self.sizes)

    def view(self, t: torch.Tensor) -> torch.Tensor:
        """The walked elements of `t` as a strided view (shape `sizes`)."""
        if math.prod(t.shape) != math.prod(self.tensor_dims):
            raise ValueError(f"TensorAccessPattern over {list(self.tensor_dims)} applied to a tensor "
                             f"of shape {list(t.shape)}")
        if not t.is_contiguous():
            raise ValueError("TensorAccessPattern applies to contiguous tensors")
        return t.reshape(-1).as_strided(self.sizes, self.strides, t.storage_offset() + self.offset)

    def gather(self, t: torch.Tensor) -> torch.Tensor:
        """The walked elements of `t`, in walk order, as a contiguous 1-D tensor."""
        return self.view(t).reshape(-1)

    def scatter(self, t: torch.Tensor, values: torch.Tensor) -> None:
        """Write `values` (walk order) into `t` through the walk."""
        self.view(t).copy_(values.reshape(self.sizes))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TensorAccessPattern) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self.tensor_dims, self.offset, self.sizes, self.strides)

    def __repr__(self) -> str:
        return (f"TensorAccessPattern({list(self.tensor_dims)}, offset={self.offset}, "
                f"sizes={list(self.sizes)}, strides={list(self.strides)})")
