"""`ParamSpec`: one parameter of a compiled program's signature."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import DataType
from ..ir.enums import ParamDirection


@dataclass(frozen=True)
class ParamSpec:
    """One program parameter: a tensor (static ints or dynamic-dim names) or a scalar."""

    name: str
    dtype: DataType
    shape: tuple[int | str, ...] | None = None  # None: a scalar
    direction: ParamDirection = ParamDirection.In

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None
