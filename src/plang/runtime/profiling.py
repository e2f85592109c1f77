"""Swimlane traces: one Chrome-trace / Perfetto JSON per profiled run.

Each execution lane (a worker thread standing for a core, or an auxiliary thread running a
Group member or a ``sync_start`` block) is one trace thread; each kernel execution is one
complete ("X") slice named after the kernel, with the task id, block index, sub-block
(AIV lane) index and the ids of the tasks it waited for in ``args``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Slice:
    lane: str
    kernel: str
    task_id: int
    block: int
    subblock: int
    deps: tuple[int, ...]
    start_ns: int
    end_ns: int


class Profiler:
    """Collects slices during one run (``list.append`` is atomic under the GIL)."""

    def __init__(self) -> None:
        self.slices: list[Slice] = []
        self.skipped: list[int] = []
        self.started_ns = time.perf_counter_ns()
        self.ended_ns: int | None = None

    def record(self, lane: str, kernel: str, task_id: int, block: int, subblock: int,
               deps: tuple[int, ...], start_ns: int, end_ns: int) -> None:
        self.slices.append(Slice(lane, kernel, task_id, block, subblock, deps, start_ns, end_ns))

    def finish(self) -> None:
        self.ended_ns = time.perf_counter_ns()

    def lanes(self) -> list[str]:
        return sorted({s.lane for s in self.slices}, key=_lane_order)

    def trace(self) -> dict[str, Any]:
        """The Chrome-trace JSON object."""
        lanes = self.lanes()
        tid = {name: i for i, name in enumerate(lanes)}
        events: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0,
                                         "args": {"name": "plang chip"}}]
        events += [{"name": "thread_name", "ph": "M", "pid": 0, "tid": tid[name], "args": {"name": name}}
                   for name in lanes]
        for s in self.slices:
            events.append({
                "name": s.kernel, "ph": "X", "pid": 0, "tid": tid[s.lane],
                "ts": (s.start_ns - self.started_ns) / 1e3, "dur": (s.end_ns - s.start_ns) / 1e3,
                "args": {"task": s.task_id, "block": s.block, "subblock": s.subblock, "deps": list(s.deps)},
            })
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def summary(self) -> str:
        """One line: tasks, wall time, utilisation of the lanes that ran something."""
        end = self.ended_ns or time.perf_counter_ns()
        wall = max(end - self.started_ns, 1)
        busy = sum(s.end_ns - s.start_ns for s in self.slices)
        lanes = max(len(self.lanes()), 1)
        tasks = len({s.task_id for s in self.slices})
        return (f"plang run: {tasks} tasks ({len(self.slices)} kernel slices, {len(self.skipped)} skipped) "
                f"in {wall / 1e6:.3f} ms on {lanes} lanes, utilisation {100.0 * busy / (wall * lanes):.1f}%")

    def write(self, folder: str, name: str) -> str:
        """Write ``<folder>/<name>-<timestamp>.json``; returns the path."""
        os.makedirs(folder, exist_ok=True)
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{time.perf_counter_ns() % 10**9:09d}"
        path = os.path.join(folder, f"{name}-{stamp}.json")
        with open(path, "w") as f:
            json.dump(self.trace(), f)
        return path


def _lane_order(name: str) -> tuple[str, int]:
    prefix, _, number = name.rpartition("-")
    return (prefix, int(number)) if number.isdigit() else (name, 0)
