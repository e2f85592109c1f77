"""`benchmark`: register a compiled program once, then time repeated launches.

Each launch is timed twice: ``host_wall_us``, the whole call as the host sees it (argument
checks, the orchestration, waiting for the chip), and ``device_wall_us``, the simulated
chip's busy window: from the first kernel execution's start to the last one's end, read from
the run's kernel slices (`plang.runtime.profiling`). The ``warmup`` leading launches are run
and dropped.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from .compiled import CompiledProgram
from .config import RunConfig
from .worker import ChipWorker

METRICS = ("device", "host")


@dataclass
class BenchmarkStats:
    """Per-launch timings of the measured launches (µs) and their summaries (of the device
    metric)."""

    device_wall_us: list[float] = field(default_factory=list)
    host_wall_us: list[float] = field(default_factory=list)
    rounds: int = 0
    warmup: int = 0

    @property
    def samples(self) -> list[float]:
        return self.device_wall_us

    @property
    def all_zero_device(self) -> bool:
        """Whether there are samples and every one is 0 (a launch that ran no kernel)."""
        return bool(self.device_wall_us) and not any(self.device_wall_us)

    @property
    def device_us_min(self) -> float:
        return min(self.device_wall_us)

    @property
    def device_us_max(self) -> float:
        return max(self.device_wall_us)

    @property
    def device_us_median(self) -> float:
        return statistics.median(self.device_wall_us)

    @property
    def device_us_mean(self) -> float:
        return statistics.fmean(self.device_wall_us)

    @property
    def device_us_stdev(self) -> float:
        return statistics.stdev(self.device_wall_us) if len(self.device_wall_us) > 1 else 0.0

    def per_round(self, metric: str = "device") -> list[float]:
        """The `metric` ("device" or "host") of each measured launch."""
        if metric not in METRICS:
            raise ValueError(f"per_round: metric must be one of {', '.join(METRICS)}, got {metric!r}")
        return list(self.device_wall_us if metric == "device" else self.host_wall_us)


def benchmark(compiled: Any, args: Sequence[Any], *, rounds: int = 100, warmup: int = 3,
              platform: str | None = None, device_id: int | None = None,
              config: RunConfig | None = None) -> BenchmarkStats:
    """Register `compiled` on one new `ChipWorker` and launch it ``warmup + rounds`` times with
    `args` (as ``compiled(*args)``); the worker's chip is `config`'s, else `platform` (default
    the one `compiled` was built for) and `device_id`."""
    if not isinstance(compiled, CompiledProgram):
        raise TypeError(f"benchmark() takes a single-chip CompiledProgram, got {type(compiled).__name__}")
    if rounds < 1 or warmup < 0:
        raise ValueError(f"benchmark: rounds must be positive and warmup non-negative, got "
                         f"rounds={rounds}, warmup={warmup}")
    if config is not None and (platform is not None or device_id is not None):
        raise TypeError("benchmark: pass either config= or platform= / device_id=, not both")
    if config is None:
        config = RunConfig(platform=platform or compiled.platform, device_id=device_id or 0)
    stats = BenchmarkStats(rounds=rounds, warmup=warmup)
    with ChipWorker(config) as worker:
        handle = worker.register(compiled)
        for launch in range(warmup + rounds):
            start = time.perf_counter_ns()
            _, profile = handle.timed(*args)
            host_ns = time.perf_counter_ns() - start
            if launch < warmup:
                continue
            slices = profile.slices
            device_ns = max(s.end_ns for s in slices) - min(s.start_ns for s in slices) if slices else 0
            stats.device_wall_us.append(device_ns / 1e3)
            stats.host_wall_us.append(host_ns / 1e3)
    return stats
