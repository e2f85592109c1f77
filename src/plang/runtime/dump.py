"""Tensor dumps: the contents of a launch's tensor arguments right after it ran.

`RunConfig(enable_dump_args=...)` picks what is dumped: 0 nothing; 1 the arguments a launch
marks with ``dumps=[...]`` / ``pl.dump_tag`` (partial dump); 2 every tensor argument of
every launch (full dump). A dump is a host task reading the marked tensors, submitted right
after its launch with an explicit edge to it: it sees the launch's result and, in AUTO
scopes, later writers of those tensors wait for it (in a manual scope only the declared
edges order it, so a later writer may win). Each tensor goes to
``<dump_dir>/<program>-<stamp>/<seq>_<kernel>_task<id>_arg<position>.pt`` (`torch.save`);
`paths` lists them in submission order.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Sequence

import torch

from ..ir.enums import ParamDirection
from .scheduler import Scheduler, Task

DUMP_LEVELS = (0, 1, 2)


class TensorDumper:
    """Dumps the tensors of one run's launches into one folder."""

    def __init__(self, root: str, program: str, level: int) -> None:
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{time.perf_counter_ns() % 10**9:09d}"
        self.folder = os.path.join(root, f"{program}-{stamp}")
        self.level = level
        self.paths: list[str] = []
        self._seq = 0
        self._lock = threading.Lock()

    def after(self, scheduler: Scheduler, task: Task, kernel: str, args: Sequence[Any],
              marked: Sequence[int]) -> None:
        """Queue the dump of `task`'s arguments at `marked` (every tensor at level 2)."""
        positions = range(len(args)) if self.level == 2 else marked
        positions = [i for i in positions if isinstance(args[i], torch.Tensor)]
        if not positions:
            return
        names = []
        for i in positions:
            names.append(os.path.join(self.folder, f"{self._seq:05d}_{kernel}_task{task.id}_arg{i}.pt"))
            self._seq += 1
        self.paths += names
        tensors = [args[i] for i in positions]

        def dump(*values: torch.Tensor) -> None:
            os.makedirs(self.folder, exist_ok=True)
            for path, value in zip(names, values):
                torch.save(value.detach().clone(), path)

        scheduler.submit(dump, tensors, (ParamDirection.In,) * len(tensors), deps=(task,),
                         name=f"dump {kernel}")
