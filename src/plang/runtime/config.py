"""`RunConfig`: how a program is compiled and run (platform, chip geometry, threads, profiling).

It takes every field of the reference's RunConfig, with plang's meaning; `REFERENCE_ONLY`
lists the ones that have none on the simulated chip (accepted, validated where the reference
validates, and otherwise without effect).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from ..backend import BackendType
from ..ir.pipeline import OptimizationStrategy, PassDumpLevel, coerce_dump_level
from ..target import Device, Isa, platform_device

PLATFORMS = ("cpu", "a2a3", "a2a3sim", "a5", "a5sim")

#: reference fields with no meaning on the simulated chip: the hardware profilers and ring
#: sizes of the Ascend runtime, ptoas / memory-planner / diagnostics options of its compiler,
#: its golden-data harness, and the distributed engine (a separate layer in plang)
REFERENCE_ONLY = ("enable_pmu", "enable_dep_gen", "enable_scope_stats", "compile_profiling",
                  "diagnostic_phase", "disabled_diagnostics", "golden_data_dir", "aicpu_thread_num",
                  "ring_task_window", "ring_heap", "ring_dep_pool", "distributed_config",
                  "analyze_auto_scopes_for_deps", "memory_planner", "dump_ptoas_passes")

_RINGS = (("ring_task_window", "be a power of 2 >= 4", lambda v: v >= 4 and v & (v - 1) == 0),
          ("ring_heap", "be a power of 2 >= 1024 (bytes per ring)", lambda v: v >= 1024 and v & (v - 1) == 0),
          ("ring_dep_pool", "be in [4, INT32_MAX]", lambda v: 4 <= v <= 2**31 - 1))


def _ignored(default: Any = None) -> Any:
    """A reference-only field: kept for the caller, left out of equality (and hashing)."""
    return field(default=default, compare=False)


@dataclass(kw_only=True, unsafe_hash=True)
class RunConfig:
    """Options for compiling and running a program.

    platform: ``"cpu"`` (default: a host-sized chip) or one of the reference's ``"a2a3"`` /
    ``"a2a3sim"`` (Ascend 910B) / ``"a5"`` / ``"a5sim"`` (Ascend 950): the simulated chip with
    that platform's core groups and on-chip buffer capacities (`plang.target.PLATFORMS`); a
    ``sim`` platform is the same chip as its hardware name.
    device_id: any non-negative id; every id names the one simulated chip.
    rtol, atol: tolerances for harnesses comparing results (plang's run does not compare).
    strategy: the pass pipeline (an `OptimizationStrategy` or a `plang.passes.PIPELINES` name).
    backend_type: a `plang.backend.BackendType`; set from the platform for the reference's
    platforms (as the reference does), recorded as given for ``"cpu"``.
    dump_passes: per-pass IR dumps: a `PassDumpLevel` or bool (into ``passes_dump`` under the
    artefact folder, see save_kernels_dir), or a folder path.
    save_kernels, save_kernels_dir: write the artefacts (orchestration source, kernel MLIR) of
    `plang.runtime.run` / `plang.ir.compile` into save_kernels_dir (default
    ``build_output/<program>_<timestamp>``).
    codegen_only: `plang.runtime.run` compiles and does not run.
    enable_chip_swimlane: 0-4 or bool; any level above 0 turns profiling on (plang records one
    swimlane trace, the same at every level).
    device / clusters: chip geometry override; give a whole `Device`, or just a cluster count.
    isa: the instruction set kernels are generated for (a `plang.target.Isa` or a spec such as
    ``"x86-64-v3"``); default ``$PLANG_ISA``, else the host's level. With `device=`, give it
    there (`Device(isa=...)`).
    workers: host threads running core tasks (default: the device's cluster count).
    verify: property verification after every pass.
    profiling, profile_dir: write a swimlane trace per run into ``profile_dir``
    (default ``./plang_profile``).
    pipe_timeout: seconds a cross-core pipe or `pl.system.syncall` wait may block before the run
    fails as a deadlock.
    kernel_timeout: seconds one task instance (a kernel, an SPMD block, a Group instance) may
    run before it is cancelled and the run fails (None: no limit). Native kernels stop at
    their next cancellation point (a loop back-edge, a DDR store, a pipe wait).
    enable_dump_args, dump_dir: tensor dumps (see `plang.runtime.dump`): 0 off, 1 the arguments
    marked with ``dumps=`` / ``pl.dump_tag``, 2 every tensor argument; written under
    ``dump_dir`` (default ``./plang_dump``), one folder per run.
    disk_cache: let `@pl.jit` persist compiled programs on disk and reuse them across processes
    (also off when the environment sets ``PLANG_DISK_CACHE=0``).
    The fields in `REFERENCE_ONLY` are accepted without effect. Unknown keywords raise
    `TypeError` naming the keyword. As in the reference, fields can be assigned after
    construction (harnesses set ``config.rtol`` / ``config.atol`` per test); the value is
    not re-validated, and a compile or worker picks up the fields as they are when it starts.
    """

    platform: str = "cpu"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: OptimizationStrategy | str = OptimizationStrategy.Default
    backend_type: BackendType = BackendType.Ascend910B
    dump_passes: bool | PassDumpLevel | str | None = False
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    codegen_only: bool = False
    enable_chip_swimlane: int | bool = 0
    enable_dump_args: int = 0
    device: Device | None = None
    clusters: int | None = None
    isa: Isa | str | None = None
    workers: int | None = None
    verify: bool = False
    profiling: bool = False
    profile_dir: str | None = None
    pipe_timeout: float = 30.0
    kernel_timeout: float | None = None
    dump_dir: str | None = None
    disk_cache: bool = True
    enable_pmu: int = _ignored(0)
    enable_dep_gen: bool = _ignored(False)
    enable_scope_stats: bool = _ignored(False)
    compile_profiling: bool = _ignored(False)
    diagnostic_phase: Any = _ignored()
    disabled_diagnostics: Any = _ignored()
    golden_data_dir: str | None = _ignored()
    aicpu_thread_num: int | None = _ignored()
    ring_task_window: int | tuple[int, ...] | None = _ignored()
    ring_heap: int | tuple[int, ...] | None = _ignored()
    ring_dep_pool: int | tuple[int, ...] | None = _ignored()
    distributed_config: Any = _ignored()
    analyze_auto_scopes_for_deps: bool = _ignored(False)
    memory_planner: Any = _ignored()
    dump_ptoas_passes: bool = _ignored(False)

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise ValueError(f"RunConfig: unknown platform {self.platform!r}; "
                             f"available: {', '.join(PLATFORMS)}")
        if self.platform != "cpu":
            object.__setattr__(self, "backend_type", BackendType.for_platform(self.platform))
        if isinstance(self.device_id, bool) or not isinstance(self.device_id, int) or self.device_id < 0:
            raise ValueError(f"RunConfig: device_id must be a non-negative int, got {self.device_id!r}")
        if not isinstance(self.dump_passes, (str, type(None))):
            coerce_dump_level(self.dump_passes)
        object.__setattr__(self, "enable_chip_swimlane", _swimlane_level(self.enable_chip_swimlane))
        if self.enable_chip_swimlane:
            object.__setattr__(self, "profiling", True)
        for name, phrase, ok in _RINGS:
            object.__setattr__(self, name, _ring_value(name, getattr(self, name), phrase, ok))
        if self.device is not None and (self.clusters is not None or self.isa is not None):
            raise ValueError("RunConfig: give either device= or clusters= / isa=, not both")
        if self.isa is not None:
            object.__setattr__(self, "isa", Isa.resolve(self.isa))
        if self.device is not None and not isinstance(self.device, Device):
            raise TypeError("RunConfig: device must be a plang.target.Device, "
                            f"got {type(self.device).__name__}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"RunConfig: workers must be at least 1, got {self.workers}")
        if self.enable_dump_args not in (0, 1, 2):
            raise ValueError("RunConfig: enable_dump_args must be 0 (off), 1 (marked tensors) or "
                             f"2 (every tensor argument), got {self.enable_dump_args!r}")
        if self.pipe_timeout <= 0:
            raise ValueError(f"RunConfig: pipe_timeout must be positive, got {self.pipe_timeout}")
        if self.kernel_timeout is not None and not self.kernel_timeout > 0:
            raise ValueError(f"RunConfig: kernel_timeout must be positive or None, got {self.kernel_timeout}")

    def resolved_device(self) -> Device:
        """The chip this config describes."""
        if self.device is not None:
            return self.device
        return platform_device(self.platform, clusters=self.clusters, isa=self.isa)

    def worker_count(self) -> int:
        return self.workers if self.workers is not None else self.resolved_device().clusters

    @property
    def strategy_name(self) -> str:
        """The pass pipeline's name."""
        return self.strategy.value if isinstance(self.strategy, OptimizationStrategy) else self.strategy

    def resolved_profile_dir(self) -> str:
        return self.profile_dir or os.path.join(os.getcwd(), "plang_profile")

    def resolved_dump_dir(self) -> str:
        return self.dump_dir or os.path.join(os.getcwd(), "plang_dump")

    def pass_dump_dir(self, artefacts: str) -> str | None:
        """Where per-pass IR dumps go (`artefacts`: this compile's artefact folder), or None."""
        if self.dump_passes is None or isinstance(self.dump_passes, str):
            return self.dump_passes
        if coerce_dump_level(self.dump_passes) is PassDumpLevel.NONE:
            return None
        return os.path.join(artefacts, "passes_dump")

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        object.__setattr__(self, "_revision", self.__dict__.get("_revision", 0) + 1)

    def __getstate__(self) -> dict[str, Any]:
        """The fields (a copy or a pickle leaves out the memo of the default worker)."""
        state = dict(self.__dict__)
        state.pop("_default_worker", None)
        return state

    @property
    def revision(self) -> int:
        """How many field assignments this config has seen: memos of what it selects (its
        default `ChipWorker`) stay valid while it is unchanged."""
        return self.__dict__.get("_revision", 0)

    def snapshot(self) -> tuple:
        """The compared fields' current values (a key that later assignments do not change)."""
        return _compared_fields(self)

    def compile_key(self) -> tuple:
        """The fields that change the compiled artefact (for compile-cache keys)."""
        return (self.platform, self.resolved_device().key(), self.strategy_name)


_compared_fields = attrgetter(*(f.name for f in fields(RunConfig) if f.compare))


def _swimlane_level(value: int | bool) -> int:
    if isinstance(value, bool):
        return 4 if value else 0
    if not isinstance(value, int) or not 0 <= value <= 4:
        raise ValueError(f"RunConfig: enable_chip_swimlane must be a level 0-4 or a bool, got {value!r}")
    return value


def _ring_value(name: str, value: Any, phrase: str, ok: Any) -> Any:
    """A ring-size override checked as the reference checks it (a list becomes a tuple)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != 4:
            raise ValueError(f"RunConfig: {name} must have exactly 4 entries (one per ring), "
                             f"got {len(value)}")
        for v in value:
            if not _is_int(v) or (v != 0 and not ok(v)):
                raise ValueError(f"RunConfig: {name} entries must {phrase} (or 0 to keep default), got {v!r}")
        return tuple(value)
    if not _is_int(value) or not ok(value):
        raise ValueError(f"RunConfig: {name} must {phrase}, got {value!r}")
    return value


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
