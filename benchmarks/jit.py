"""@pl.jit costs: cold compile, warm-call overhead, and a new process's first call.

    python benchmarks/jit.py

Rows: cold compile of the hello-world and flash-attention kernels (specialize + parse +
passes + MLIR/LLVM codegen, disk cache off); warm call (cache hit -> kernel launched ->
return) of the 128x128 hello-world add against one torch eager op on the same tensors; a new process's
first call with a warm disk cache against the same first call with a cold one (both after a
`gc.collect()`: importing torch leaves a full collection due, ~70 ms, that would otherwise
land in whichever call comes first).
Targets: warm-call overhead < 50 us; disk-cache first call < 15% of a cold compile.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cold_compile_ms(entry, *args) -> float:
    """Median of fresh JITFunctions compiling the same kernel (nothing cached)."""
    times = []
    for _ in range(3):
        fresh = type(entry)(entry.__wrapped__, entry.kind)
        start = time.perf_counter()
        fresh.compile(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def warm_call_us(entry, args, peer, reps: int = 2000) -> tuple[float, float]:
    entry(*args)
    peer()

    def median_us(fn) -> float:
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(reps):
                fn()
            samples.append((time.perf_counter() - start) / reps)
        return statistics.median(samples) * 1e6

    return median_us(lambda: entry(*args)), median_us(peer)


FIRST_CALL = """
import sys, time, torch
sys.path.insert(0, {examples!r})
import importlib; hello = importlib.import_module("01_hello_world")
a, b, c = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
import gc; gc.collect()  # settle the collection importing torch leaves due, in both cases
start = time.perf_counter(); hello.hello(a, b, c); print(time.perf_counter() - start)
"""


def first_call_ms(cache: str) -> float:
    code = FIRST_CALL.format(examples=str(ROOT / "examples"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PLANG_CACHE_DIR": cache})
    return float(out.stdout.strip().splitlines()[-1]) * 1e3


def rows() -> list[tuple[str, float, float, str, str]]:
    """(workload, plang, peer, unit, peer name) rows."""
    os.environ["PLANG_DISK_CACHE"] = "0"
    hello = _example("01_hello_world").hello
    a, b, c = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
    out = [("cold compile: hello world", cold_compile_ms(hello, a, b, c), float("nan"), "ms", "-")]
    fa = _example("06_flash_attention").flash_attention
    q, kt, v = (torch.randn(*shape).bfloat16() for shape in ((64, 128), (128, 256), (256, 128)))
    out.append(("cold compile: flash attention (AIC+AIV+Group)",
                cold_compile_ms(fa, q, kt, v, torch.empty(64, 128)), float("nan"), "ms", "-"))
    x, y, z = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
    ours, peer = warm_call_us(hello, (x, y, z), lambda: torch.add(x, y, out=z))
    out.append(("warm call: hello world 128x128 add", ours, peer, "us", "torch.add eager"))
    del os.environ["PLANG_DISK_CACHE"]
    with tempfile.TemporaryDirectory() as tmp:
        cold = statistics.median(first_call_ms(os.path.join(tmp, f"c{i}")) for i in range(2))
        first_call_ms(os.path.join(tmp, "warm"))
        warm = statistics.median(first_call_ms(os.path.join(tmp, "warm")) for _ in range(3))
    out.append(("new process first call, warm disk cache", warm, cold, "ms", "cold first call"))
    return out


def main() -> None:
    print(f"{'workload':<44}{'plang':>12}{'peer':>12}{'ratio':>8}  unit, peer")
    for name, ours, peer, unit, peer_name in rows():
        ratio = ours / peer if peer == peer else float("nan")
        print(f"{name:<44}{ours:>12.1f}{peer:>12.1f}{ratio:>8.2f}  {unit}, {peer_name}")


if __name__ == "__main__":
    main()
