"""The names the reference's system tests import from `harness.core.harness`, on plang: a
test case describes its tensors, scalars, program and torch golden (`PTOTestCase`); the
runner in ../../conftest.py builds the arguments, runs the program with
`plang.runtime.run` and compares every output with the golden."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable

import pytest
import torch

from plang.backend import BackendType
from plang.runtime import RunConfig
from plang.runtime.runner import ScalarSpec

__all__ = ["ALL_PLATFORM_IDS", "ONBOARD_PLATFORMS", "PLATFORMS", "SIM_PLATFORMS", "DataType", "PTOTestCase",
           "ScalarSpec", "TensorSpec", "platform_to_backend"]

SIM_PLATFORM_IDS = ("a2a3sim", "a5sim")
ONBOARD_PLATFORM_IDS = ("a2a3", "a5")
ALL_PLATFORM_IDS = (*SIM_PLATFORM_IDS, *ONBOARD_PLATFORM_IDS)
PLATFORMS = [pytest.param(p, id=p) for p in ALL_PLATFORM_IDS]
SIM_PLATFORMS = [pytest.param(p, id=p) for p in SIM_PLATFORM_IDS]
ONBOARD_PLATFORMS = [pytest.param(p, id=p) for p in ONBOARD_PLATFORM_IDS]


def platform_to_backend(platform: str) -> BackendType:
    return BackendType.for_platform(platform)


class DataType(enum.Enum):
    BF16 = "bf16"
    FP32 = "fp32"
    FP16 = "fp16"
    FP8E4M3FN = "fp8e4m3fn"
    FP8E8M0 = "fp8e8m0"
    FP4 = "fp4"
    INT32 = "int32"
    UINT32 = "uint32"
    INT16 = "int16"
    UINT16 = "uint16"
    INT8 = "int8"
    UINT8 = "uint8"
    INT64 = "int64"
    BOOL = "bool"

    @property
    def torch_dtype(self) -> torch.dtype:
        """The torch dtype holding this type's values (unsigned 16 / 32-bit: the same bits in
        the signed type, as torch has no such dtype)."""
        name = _TORCH_NAMES[self]
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"this torch has no dtype torch.{name} for {self.name}")
        return dtype


_TORCH_NAMES = {
    DataType.BF16: "bfloat16", DataType.FP32: "float32", DataType.FP16: "float16",
    DataType.FP8E4M3FN: "float8_e4m3fn", DataType.FP8E8M0: "float8_e8m0fnu", DataType.FP4: "float4_e2m1fn_x2",
    DataType.INT32: "int32", DataType.UINT32: "int32", DataType.INT16: "int16", DataType.UINT16: "int16",
    DataType.INT8: "int8", DataType.UINT8: "uint8", DataType.INT64: "int64", DataType.BOOL: "bool",
}


@dataclass
class TensorSpec:
    """A named tensor argument (`init_value` as `plang.runtime.runner.TensorSpec` reads it)."""

    name: str
    shape: list[int]
    dtype: DataType
    init_value: int | float | torch.Tensor | Callable | None = None
    is_output: bool = False


class PTOTestCase:
    """One case: `define_tensors` (and `define_scalars`), `get_program`, `compute_expected`
    writing the golden outputs in place. `config` carries the tolerances; `platform` picks
    the simulated chip (`plang.target.PLATFORMS`)."""

    __test__ = False

    def __init__(self, config: RunConfig | None = None, *, platform: str | None = None, **options: Any):
        self._platform = platform
        self.options = options  # backend_type, strategy, memory planner: no effect on plang
        self.config = config or RunConfig(**({"platform": platform} if platform else {}))

    def get_name(self) -> str:
        return type(self).__name__

    def get_platform(self) -> str | None:
        return self._platform

    def get_strategy(self) -> Any:
        return None

    def get_memory_planner(self) -> Any:
        return None

    def get_enable_pypto_l0c_double_buffer(self) -> bool | None:
        return None

    def get_backend_type(self) -> BackendType:
        return platform_to_backend(self._platform or "a2a3")

    def define_scalars(self) -> list[ScalarSpec]:
        return []
