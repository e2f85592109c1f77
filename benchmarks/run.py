"""The benchmark report: every benchmark of plang in one table beside its peer.

    python benchmarks/run.py            # all
    python benchmarks/run.py kernels    # some: kernels, runtime, jit, passes, parse_bench

Each benchmark module exposes `rows()` -> [(workload, plang, peer, unit, peer name)] and runs in
a process of its own (so one benchmark's threads and caches do not skew the next). Ratio
is plang / peer: for throughputs (GB/s, GFLOP/s, tasks/s) higher is better, for times (ms, us,
s) lower is better; a "target" peer is the goal the issue sets rather than another library.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

MODULES = ("kernels", "runtime", "jit", "passes", "parse_bench")
HERE = Path(__file__).resolve().parent


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def module_rows(name: str) -> list[list]:
    """Rows of one benchmark module, measured in a fresh process (no state carried over)."""
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import {name}; "
            f"print('ROWS', json.dumps({name}.rows()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(next(ln for ln in out.stdout.splitlines() if ln.startswith("ROWS "))[5:])


def main(selected: list[str]) -> None:
    print(f"plang benchmarks, {datetime.date.today()}, {machine()}")
    print(f"{'benchmark':<12}{'workload':<46}{'plang':>14}{'peer':>14}{'ratio':>8}  unit, peer")
    for name in selected or MODULES:
        for workload, ours, peer, unit, peer_name in module_rows(name):
            ratio = ours / peer if peer == peer and peer else float("nan")
            print(f"{name:<12}{workload:<46}{ours:>14,.2f}{peer:>14,.2f}{ratio:>8.2f}  {unit}, {peer_name}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
