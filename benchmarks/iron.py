"""IRON designs on the simulated chip: streaming throughput beside torch.

    python benchmarks/iron.py [--reps 5]

Rows (median of the repetitions; the ratio is plang / torch):
- passthrough: 16 Mi int32 in 4 KiB objects (16384 objects) through two Workers
  (fill -> Worker -> fifo -> Worker -> drain, each Worker copying one object per iteration),
  in objects/s and GB/s (bytes of the input per second) beside `torch.clone`.
  Goal: >= 2 GB/s.
- vector add: the tiled vector add of examples/16_iron_vector_add.py (2 columns, 4096-element
  fp32 tiles, a native C kernel per tile) on 16 Mi elements, beside `torch.add`.
  Goal: >= 0.5x torch.add.

What bounds them: the Worker bodies are Python. Each object costs every Worker a core-function
iteration (two acquires, a kernel or copy, two releases: a few microseconds of interpreter
time), and the Workers share one GIL, so objects/s is flat in the object size while GB/s
grows with it; transfers (one C call per fill / drain) and kernels run without the GIL.
Compiling Worker bodies natively would remove that: a core function written as a plang
``@pl.jit.incore``-style function whose parameters are fifo handles, with `acquire` /
`release` lowered to the ring ABI the AIC/AIV pipe codegen already calls
(``codegen/kernel/lower_pipe.py``: pop / free, plus the new reserve_ref / commit), its loop to
scf.for and its kernel calls to direct calls, so a Worker is one native launch per run and an
object costs a lock-free ring step (tens of nanoseconds). The parser would need fifo-handle
parameter types and the Worker's `range_` / `forever_` loops; the runtime already has the
per-ring calls.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

import plang.iron as iron
from plang.iron import ObjectFifo, Program, Runtime, Worker
from plang.target import Isa

N = 16 * 1024 * 1024
OBJ = 1024  # int32 elements: 4 KiB objects


def median_seconds(fn, reps: int) -> float:
    fn()  # warm: builds, first-touch of the buffers
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def passthrough_design():
    obj_ty = np.ndarray[(OBJ,), np.dtype[np.int32]]
    all_ty = np.ndarray[(N,), np.dtype[np.int32]]
    of_in, of_mid, of_out = (ObjectFifo(obj_ty, name=k) for k in ("in", "mid", "out"))

    def copy_core(src, dst):
        x, y = src.acquire(1), dst.acquire(1)
        y.copy_(x)
        src.release(1)
        dst.release(1)

    workers = [Worker(copy_core, [of_in.cons(), of_mid.prod()]),
               Worker(copy_core, [of_mid.cons(), of_out.prod()])]

    def sequence(a, c, in_h, out_h):
        in_h.fill(a)
        out_h.drain(c, wait=True)

    rt = Runtime(sequence, [all_ty, all_ty, of_in.prod(), of_out.cons()])
    return Program(iron.get_current_device(), rt, workers).resolve_program()


def load_example(name: str):
    path = Path(__file__).resolve().parents[1] / "examples" / name
    spec = importlib.util.spec_from_file_location(path.stem.lstrip("0123456789_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    reps = parser.parse_args().reps
    rows = []

    design = passthrough_design()
    a = torch.randint(-2**31, 2**31 - 1, (N,), dtype=torch.int32)
    c = torch.zeros_like(a)
    t_iron = median_seconds(lambda: design(a, c), reps)
    assert torch.equal(a, c), "passthrough result differs from its input"
    t_torch = median_seconds(lambda: a.clone(), reps)
    rows.append(("passthrough 2 Workers, 16 Mi int32, 4 KiB objects", f"{N // OBJ / t_iron:,.0f} obj/s",
                 a.nbytes / t_iron / 1e9, a.nbytes / t_torch / 1e9, t_torch / t_iron, ">= 2 GB/s"))

    vector_add = load_example("16_iron_vector_add.py").vector_add
    x, y = torch.randn(N), torch.randn(N)
    z = torch.zeros(N)
    t_iron = median_seconds(lambda: vector_add(x, y, z), reps)
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    t_torch = median_seconds(lambda: torch.add(x, y), reps)
    objects = N // 4096
    rows.append(("vector add 2 columns, 16 Mi fp32, 4096-element tiles", f"{objects / t_iron:,.0f} tiles/s",
                 3 * x.nbytes / t_iron / 1e9, 3 * x.nbytes / t_torch / 1e9, t_torch / t_iron,
                 ">= 0.5x torch.add"))

    print(f"ISA level {Isa.default().spec()}, torch threads {torch.get_num_threads()}, "
          f"python {sys.version.split()[0]}")
    print(f"{'design':<56} {'rate':>16} {'GB/s':>7} {'torch GB/s':>11} {'ratio':>6}  goal")
    for name, rate, gbs, torch_gbs, ratio, goal in rows:
        print(f"{name:<56} {rate:>16} {gbs:>7.3f} {torch_gbs:>11.3f} {ratio:>6.3f}  {goal}")


if __name__ == "__main__":
    main()
