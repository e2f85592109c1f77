"""The benchmark report: every benchmark of plang in one table beside its peer.

    python benchmarks/run.py            # all
    python benchmarks/run.py kernels    # some: kernels, runtime, jit, passes, parse_bench

Each benchmark module exposes `rows()` -> [(workload, plang, peer, unit, peer name)]. Ratio
is plang / peer: for throughputs (GB/s, GFLOP/s, tasks/s) higher is better, for times (ms, us,
s) lower is better; a "target" peer is the goal the issue sets rather than another library.
"""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import sys
from pathlib import Path

MODULES = ("kernels", "runtime", "jit", "passes", "parse_bench")


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main(selected: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print(f"plang benchmarks, {datetime.date.today()}, {machine()}")
    print(f"{'benchmark':<12}{'workload':<46}{'plang':>12}{'peer':>12}{'ratio':>8}  unit, peer")
    for name in selected or MODULES:
        module = importlib.import_module(name)
        for workload, ours, peer, unit, peer_name in module.rows():
            ratio = ours / peer if peer == peer and peer else float("nan")
            print(f"{name:<12}{workload:<46}{ours:>12,.2f}{peer:>12,.2f}{ratio:>8.2f}  {unit}, {peer_name}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
