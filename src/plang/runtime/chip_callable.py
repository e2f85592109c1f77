"""The reference's manual-dispatch surface of a compiled program, on the simulated chip.

``compiled.chip_callable`` is what a `simpler.worker.Worker` registers; ``runtime_name`` and
``runtime_config`` describe the runtime it needs; ``build_call_config`` makes the per-run
`CallConfig`; ``build_orch_args(*args, worker=w)`` checks and completes the arguments (Out
tensors allocated in return style) into the `OrchArgs` that ``w.run`` launches. A
`CallConfig`'s ``aicpu_thread_num`` is the number of host threads that run the chip's core
tasks (`RunConfig.workers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from .config import RunConfig

if TYPE_CHECKING:
    from .compiled import CompiledProgram

#: the reference's default runtime, the kind plang's chip is: a task graph whose dependencies come
#: from a tensor map of what each task reads and writes, with ring-buffer pipes between cores
RUNTIME_NAME = "tensormap_and_ringbuffer"


@dataclass(frozen=True, eq=False)
class ChipCallable:
    """A compiled program as a worker registers it."""

    program: CompiledProgram


@dataclass
class CallConfig:
    """Options of one manual run: scheduler threads, profiling, tensor dumps."""

    aicpu_thread_num: int
    enable_profiling: bool = False
    enable_dump_args: int = 0


@dataclass(frozen=True, eq=False)
class OrchArgs:
    """The complete, checked argument list of one run, for the worker that built it."""

    args: tuple[Any, ...]
    worker: Any


def runtime_config(compiled: CompiledProgram) -> dict[str, Any]:
    return {"platform": compiled.platform,
            "aicpu_thread_num": RunConfig(platform=compiled.platform).worker_count()}


def build_call_config(compiled: CompiledProgram, config: RunConfig | None,
                      aicpu_thread_num: int | None) -> CallConfig:
    """Thread count: `aicpu_thread_num`, else `config.workers`, else the runtime default."""
    config = config or RunConfig(platform=compiled.platform)
    threads = next(t for t in (aicpu_thread_num, config.workers, compiled.runtime_config["aicpu_thread_num"])
                   if t is not None)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"{compiled.name}: aicpu_thread_num must be a positive int, got {threads!r}")
    return CallConfig(threads, bool(config.profiling), config.enable_dump_args)


def build_orch_args(compiled: CompiledProgram, args: Sequence[Any],
                    worker: Any) -> tuple[OrchArgs, list[Any], bool]:
    """(the run's `OrchArgs`, the full argument list, whether the Out tensors were allocated)."""
    if worker is None:
        raise TypeError(f"{compiled.name}: build_orch_args needs the worker that will run the arguments")
    full, allocated = compiled.with_outputs(args)
    compiled.check_args(full)
    return OrchArgs(tuple(full), worker), list(full), allocated is not None
