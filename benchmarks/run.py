"""The benchmark report: every benchmark of plang in one table beside its peer.

    python benchmarks/run.py                      # all
    python benchmarks/run.py kernels@x86-64-v3    # some: kernels[@level], runtime, jit, passes, parse_bench

The kernel benchmarks run once per ISA level (`kernels@<level>`: the host's level and the
lower levels x86-64-v3 and x86-64 where the host runs them), side by side in one table.

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


def _kernel_levels() -> list[str]:
    sys.path.insert(0, str(HERE.parent / "src"))
    from plang.target import host_level, runnable_levels

    wanted = [host_level(), "x86-64-v3", "x86-64"]
    return [f"kernels@{lv}" for lv in dict.fromkeys(wanted) if lv in runnable_levels()]


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
    """Rows of one benchmark module (`kernels@<level>`: at that ISA level), measured in a fresh
    process (no state carried over); a module that fails gives one row with its error."""
    module, _, level = name.partition("@")
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import {module}; "
            f"print('ROWS', json.dumps({module}.rows()))")
    env = {**os.environ, **({"PLANG_ISA": level} if level else {})}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("ROWS ")]
    if out.returncode != 0 or not lines:
        why = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        return [[f"FAILED ({why[:60]})", float("nan"), float("nan"), "-", "-"]]
    return json.loads(lines[0][5:])


def main(selected: list[str]) -> None:
    print(f"plang benchmarks, {datetime.date.today()}, {machine()}")
    print(f"{'benchmark':<12}{'workload':<56}{'plang':>14}{'peer':>14}{'ratio':>8}  unit, peer")
    for name in selected or [m for n in MODULES for m in (_kernel_levels() if n == "kernels" else [n])]:
        for workload, ours, peer, unit, peer_name in module_rows(name):
            ratio = ours / peer if peer == peer and peer else float("nan")
            print(f"{name.partition('@')[0]:<12}{workload:<56}{ours:>14,.2f}{peer:>14,.2f}{ratio:>8.2f}  "
                  f"{unit}, {peer_name}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
