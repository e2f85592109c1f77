"""`RunConfig`: how a program is compiled and run (platform, chip geometry, threads, profiling)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..target import Device, Isa

PLATFORMS = ("cpu",)


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """Options for compiling and running a program.

    platform: only ``"cpu"`` (the simulated chip) is implemented.
    device_id: which chip; the CPU platform has one (0).
    device / clusters: chip geometry override; give a whole `Device`, or just a cluster count.
    isa: the instruction set kernels are generated for (a `plang.target.Isa` or a spec such as
    ``"x86-64-v3"``); default ``$PLANG_ISA``, else the host's level. With `device=`, give it
    there (`Device(isa=...)`).
    workers: host threads running core tasks (default: the device's cluster count).
    strategy, dump_passes, verify: forwarded to the pass manager (pipeline name, folder for
    per-pass IR dumps, property verification).
    profiling, profile_dir: write a swimlane trace per run into ``profile_dir``
    (default ``./plang_profile``).
    pipe_timeout: seconds a cross-core pipe wait may block before the run fails as a deadlock.
    enable_dump_args, dump_dir: tensor dumps (see `plang.runtime.dump`): 0 off, 1 the arguments
    marked with ``dumps=`` / ``pl.dump_tag``, 2 every tensor argument; written under
    ``dump_dir`` (default ``./plang_dump``), one folder per run.
    disk_cache: let `@pl.jit` persist compiled programs on disk and reuse them across processes
    (also off when the environment sets ``PLANG_DISK_CACHE=0``).
    Unknown keywords raise `TypeError` naming the keyword.
    """

    platform: str = "cpu"
    device_id: int = 0
    device: Device | None = None
    clusters: int | None = None
    isa: Isa | str | None = None
    workers: int | None = None
    strategy: str = "Default"
    dump_passes: str | None = None
    verify: bool = False
    profiling: bool = False
    profile_dir: str | None = None
    pipe_timeout: float = 30.0
    enable_dump_args: int = 0
    dump_dir: str | None = None
    disk_cache: bool = True

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise ValueError(f"RunConfig: unknown platform {self.platform!r}; "
                             f"available: {', '.join(PLATFORMS)}")
        if self.device_id != 0:
            raise ValueError(f"RunConfig: the {self.platform!r} platform has one device (device_id=0), "
                             f"got device_id={self.device_id}")
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

    def resolved_device(self) -> Device:
        """The chip this config describes."""
        if self.device is not None:
            return self.device
        if self.clusters is not None:
            return Device(clusters=self.clusters, isa=self.isa)
        return Device(isa=self.isa)

    def worker_count(self) -> int:
        return self.workers if self.workers is not None else self.resolved_device().clusters

    def resolved_profile_dir(self) -> str:
        return self.profile_dir or os.path.join(os.getcwd(), "plang_profile")

    def resolved_dump_dir(self) -> str:
        return self.dump_dir or os.path.join(os.getcwd(), "plang_dump")

    def compile_key(self) -> tuple:
        """The fields that change the compiled artefact (for compile-cache keys)."""
        return (self.platform, self.resolved_device().key(), self.strategy)

    def compile_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the pass manager / compiler."""
        return {"strategy": self.strategy, "dump_dir": self.dump_passes, "verify": self.verify,
                "device": self.resolved_device()}
