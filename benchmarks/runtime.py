"""Runtime overhead and parallelism.

    python benchmarks/runtime.py

Rows: submission rate and end-to-end rate for 10k tiny independent tasks and a 10k-task
dependency chain (peer: calling the same Python bodies in a plain loop), and the speedup
from 1 to 2 worker threads for 40 independent ~5 ms numpy kernels (sin / exp over an L2-sized
array; numpy ufuncs release the GIL, like plang's ctypes kernel calls).
Targets: >= 100k tasks/s submitted, >= 1.2x.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from plang.ir.enums import ParamDirection
from plang.runtime.scheduler import Scheduler

N = 10_000


def tiny() -> None:
    pass


def bump(x: torch.Tensor) -> None:
    x += 1


def rates(workers: int, submit_all) -> tuple[float, float]:
    sched = Scheduler(workers)
    sched.submit(tiny)
    sched.wait()  # threads started
    start = time.perf_counter()
    submit_all(sched)
    submitted = time.perf_counter()
    sched.wait()
    done = time.perf_counter()
    sched.close()
    return N / (submitted - start), N / (done - start)


def independent(sched: Scheduler) -> None:
    for _ in range(N):
        sched.submit(tiny)


def chain(sched: Scheduler) -> None:
    x = torch.zeros(4)
    dirs = (ParamDirection.InOut,)
    for _ in range(N):
        sched.submit(bump, (x,), dirs)


def loop_rate(body, args) -> float:
    start = time.perf_counter()
    for _ in range(N):
        body(*args)
    return N / (time.perf_counter() - start)


SIZE = 32_000  # fits in L2: the kernel is compute-bound, as a real tiled kernel is


def make_kernel(reps: int):
    data = np.random.default_rng(0).random(SIZE)

    def kernel(out: np.ndarray) -> None:
        for _ in range(reps):
            np.sin(data, out=out)
            np.exp(out, out=out)
    return kernel


def calibrate() -> int:
    """Repetitions that make one kernel take about 5 ms."""
    kernel, out = make_kernel(10), np.empty(SIZE)
    start = time.perf_counter()
    for _ in range(5):
        kernel(out)
    per_rep = (time.perf_counter() - start) / 50
    return max(1, round(0.005 / per_rep))


def parallel_time(workers: int, reps: int, tasks: int = 40) -> float:
    kernel = make_kernel(reps)
    outs = [torch.from_numpy(np.empty(SIZE)) for _ in range(tasks)]
    sched = Scheduler(workers)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for out in outs:
            sched.submit(lambda o: kernel(o.numpy()), (out,), (ParamDirection.Out,))
        sched.wait()
        best = min(best, time.perf_counter() - start)
    sched.close()
    return best


def rows() -> list[tuple[str, float, float, str, str]]:
    """(workload, plang, peer, unit, peer name) rows for benchmarks/run.py."""
    out = []
    sub, e2e = rates(2, independent)
    peer = loop_rate(tiny, ())
    out.append(("10k independent tiny tasks: submitted", sub, peer, "tasks/s", "plain Python loop"))
    out.append(("10k independent tiny tasks: completed", e2e, peer, "tasks/s", "plain Python loop"))
    sub, e2e = rates(2, chain)
    peer = loop_rate(bump, (torch.zeros(4),))
    out.append(("10k-task chain (InOut): submitted", sub, peer, "tasks/s", "plain Python loop"))
    out.append(("10k-task chain (InOut): completed", e2e, peer, "tasks/s", "plain Python loop"))
    reps = calibrate()
    one, two = parallel_time(1, reps), parallel_time(2, reps)
    out.append(("40 independent ~5 ms kernels, 2 threads", two, one, "s", "1 thread"))
    return out


def main() -> None:
    print(f"{'workload':<46}{'plang':>14}{'peer':>14}{'ratio':>8}  unit, peer")
    for name, ours, peer, unit, peer_name in rows():
        print(f"{name:<46}{ours:>14,.3f}{peer:>14,.3f}{ours / peer:>8.2f}  {unit}, {peer_name}")


if __name__ == "__main__":
    main()
