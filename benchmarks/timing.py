"""How the benchmarks time a workload against its peers.

`rounds(*fns)`: every fn is called once untimed, then `reps` rounds each time every fn over
`burst` consecutive calls (after one untimed call), round-robin, each round starting one
contender later (no contender always runs right after the same other one). A change of
load on the machine hits every contender alike, and no contender's timed call directly
follows another contender's: one side's temporaries (numpy's and torch eager's multi-MB
intermediates) evicting the caches, or its freed memory faulting back in, would otherwise
land on the next side's timing instead of its own.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable


def rounds(*fns: Callable[[], object] | None, reps: int = 7,
           burst: int = 3) -> list[tuple[float, float] | None]:
    """(median, best) seconds per call of each fn over `reps` rounds (None stays None)."""
    live = [f for f in fns if f is not None]
    for f in live:
        f()
    samples: dict[int, list[float]] = {id(f): [] for f in live}
    for rep in range(reps):
        for f in live[rep % len(live):] + live[:rep % len(live)]:
            if burst > 1:
                f()
            t = time.perf_counter()
            for _ in range(burst):
                f()
            samples[id(f)].append((time.perf_counter() - t) / burst)
    return [None if f is None else (statistics.median(samples[id(f)]), min(samples[id(f)])) for f in fns]
