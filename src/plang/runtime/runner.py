"""`run`, `TensorSpec`, `ScalarSpec`, `RunResult`: the reference's compile-and-run entry point,
the tensor descriptions its harnesses build arguments from, and the outcome record they
report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from ..ir.pipeline import compile_for
from .config import RunConfig

#: the reference's chip-swimlane levels (`RunConfig.enable_chip_swimlane`; plang records one
#: trace at every level above 0)
_SWIMLANE_MAX_LEVEL = 4
_SWIMLANE_FULL_LEVEL = 4
_SWIMLANE_CLI_HELP = (f"Chip swimlane collection level 0-{_SWIMLANE_MAX_LEVEL}; bare flag = "
                      f"{_SWIMLANE_FULL_LEVEL}. plang records the same trace at every level above 0.")


@dataclass
class RunResult:
    """The outcome of one harness run: whether it `passed` (ran and matched within the
    tolerances), the test's name, an error message when it did not, the wall time in seconds
    and an optional profile."""

    __test__ = False  # not a pytest test class

    passed: bool
    test_name: str | None = None
    error: str | None = None
    execution_time: float | None = None
    profile: dict[str, Any] | None = None

    def __str__(self) -> str:
        head = ("PASS" if self.passed else "FAIL") + (f": {self.test_name}" if self.test_name else "")
        if not self.passed and self.error:
            head += f" - {self.error}"
        return head + (f" ({self.execution_time:.2f}s)" if self.execution_time else "")


def run(program: Any, *tensors: Any, config: RunConfig | None = None) -> Any:
    """Compile `program` (a `@pl.program`, `ir.Program` or `ir.Function`) for `config` and,
    given `tensors` (and not ``codegen_only``), run it on them; returns the `CompiledProgram`,
    which can be called again with new tensors."""
    config = config if config is not None else RunConfig()
    compiled = compile_for(program, config)
    if tensors and not config.codegen_only:
        compiled(*tensors, config=config)
    return compiled


_FACTORIES = (torch.randn, torch.rand, torch.zeros, torch.ones)


@dataclass
class TensorSpec:
    """A named tensor argument: `shape`, torch `dtype`, how it starts (`init_value`: None for
    zeros, a number to fill, a tensor to copy, ``torch.randn`` / ``rand`` / ``zeros`` /
    ``ones``, or a no-argument callable returning the values), and whether it is an output."""

    name: str
    shape: Sequence[int]
    dtype: torch.dtype
    init_value: int | float | torch.Tensor | Callable[..., Any] | None = field(default=None)
    is_output: bool = False

    def create_tensor(self) -> torch.Tensor:
        init = self.init_value
        if init is None:
            return torch.zeros(list(self.shape), dtype=self.dtype)
        if isinstance(init, (int, float)):
            return torch.full(list(self.shape), init, dtype=self.dtype)
        if isinstance(init, torch.Tensor):
            return init.to(dtype=self.dtype)
        if callable(init):
            if init in _FACTORIES:
                return init(list(self.shape), dtype=self.dtype)
            return torch.as_tensor(init(), dtype=self.dtype)
        raise TypeError(f"TensorSpec {self.name!r}: unsupported init_value of type {type(init).__name__}")


SCALAR_CTYPES = ("int64", "int32", "uint64", "uint32", "float", "double")


@dataclass
class ScalarSpec:
    """A named scalar argument and its C type name (one of `SCALAR_CTYPES`)."""

    name: str
    value: int | float
    ctype: str = "int64"

    def __post_init__(self) -> None:
        if self.ctype not in SCALAR_CTYPES:
            raise ValueError(f"ScalarSpec {self.name!r}: unsupported ctype {self.ctype!r}; "
                             f"supported: {', '.join(SCALAR_CTYPES)}")
