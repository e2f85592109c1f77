"""How the benchmarks time a workload against its peers.

`rounds(*fns)`: every fn is called once untimed, then `reps` rounds each time every fn over
`burst` consecutive calls, after WARM_S of untimed calls of its own (at least one; none
with burst=1, for calls long enough to need none). A change of load on the machine hits
every contender alike, and no contender's timed call directly follows another contender's:
one side's temporaries (numpy's and torch eager's multi-MB intermediates) evicting the
caches, or its freed memory faulting back in, would otherwise land on the next side's
timing instead of its own. The warm-up is time, not a call count: after torch eager
returns, its OpenMP threads sleep (the benchmarks ask for passive waits) and their CPU
idles, and the next two plang calls on a 2-vCPU VM took 3.8 ms against 2.8 in steady state
(1024^3 BF16 GEMM), more than one warm-up call absorbs. The rounds walk the contenders'
permutations in turn, so each follows every other one equally often (rotating one order
would leave the same contender right after torch every round, with that penalty).
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Callable

WARM_S = 0.01


def rounds(*fns: Callable[[], object] | None, reps: int = 7,
           burst: int = 3) -> list[tuple[float, float] | None]:
    """(median, best) seconds per call of each fn over `reps` rounds (None stays None)."""
    live = [f for f in fns if f is not None]
    for f in live:
        f()
    samples: dict[int, list[float]] = {id(f): [] for f in live}
    orders = itertools.cycle(itertools.permutations(live))
    for _ in range(reps):
        for f in next(orders):
            if burst > 1:  # (burst=1: calls long enough to need no warm-up)
                until = time.perf_counter() + WARM_S
                f()
                while time.perf_counter() < until:
                    f()
            t = time.perf_counter()
            for _ in range(burst):
                f()
            samples[id(f)].append((time.perf_counter() - t) / burst)
    return [None if f is None else (statistics.median(samples[id(f)]), min(samples[id(f)])) for f in fns]
