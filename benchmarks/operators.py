"""Operator benchmark: the ready `plang.operators.kernels` operators, tuned and with their
default tiles, beside torch eager.

Run: `python benchmarks/operators.py [--level x86-64-v3] [--quick]`. Each operator is tuned
once with `plang.operators.tune` (the winner is kept in the tuning cache, so a second run
times only), then the tuned operator, the operator as `resolve()` picks its tiles, and torch
eager are timed in rounds of consecutive calls (`timing.rounds`; medians). Everything is
called as a user calls it: the operators and torch both allocate their outputs. Both sides
use every core (torch's intra-op threads; plang's SPMD blocks on the simulated chip's core
threads). Prints the workload, the ISA level, each median in ms, and tuned / default and
tuned / torch as speed-ups (> 1 is faster than torch). `--quick` shrinks the workloads (a
smoke run).
"""

from __future__ import annotations

import os
import sys

if "--level" in sys.argv:
    os.environ["PLANG_ISA"] = sys.argv[sys.argv.index("--level") + 1]
# torch's OpenMP threads otherwise spin for a while after each torch call, on the cores the
# next timed call needs (a 2-block GEMM timed right after torch: 20.9 -> 13.0 ms; torch
# itself 16.5 -> 14.5 ms): with passive waits neither side's timing includes the other's
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from timing import rounds  # noqa: E402

import plang as pl  # noqa: E402
from plang.operators import tune_report  # noqa: E402
from plang.operators.kernels import GEMM, Attention, LayerNorm, RMSNorm, RowSoftmax  # noqa: E402
from plang.runtime import RunConfig  # noqa: E402
from plang.target import Device, Isa  # noqa: E402

QUICK = "--quick" in sys.argv
DEVICE = Device()
CONFIG = RunConfig(device=DEVICE)
torch.set_num_threads(os.cpu_count() or 1)

ROWS: list[tuple] = []


def bench(name: str, op, inputs: tuple, torch_fn, reps: int = 15, target: str = ">= 1.0",
          burst: int = 3) -> None:
    """Tune `op`, check it against its reference, and time tuned / default / torch."""
    try:
        report = tune_report(op, *inputs, device=DEVICE)
        tuned, default = report.best, op.resolved(DEVICE)
        got = tuned(*inputs, config=CONFIG)
        tolerances = {} if op.rtol is None else {"rtol": op.rtol, "atol": op.atol}
        torch.testing.assert_close(got, op.reference(*inputs).to(got.dtype), **tolerances)
        timed = rounds(lambda: tuned(*inputs, config=CONFIG), lambda: default(*inputs, config=CONFIG),
                       lambda: torch_fn(*inputs), reps=reps, burst=burst)
        medians = [t[0] for t in timed]
        best_ratio = timed[2][1] / timed[0][1]  # torch's best round over the tuned one's
        chosen = ", ".join(f"{k}={v}" for k, v in report.tunables.items())
        ROWS.append((name, *medians, best_ratio, chosen, report.source, target))
    except Exception as e:  # a failure is a row of its own, not the end of the run
        nan = float("nan")
        ROWS.append((f"{name} FAILED: {type(e).__name__}: {str(e)[:70]}", nan, nan, nan, nan, "-", "-",
                     target))


def bench_rowwise() -> None:
    m, n = (512, 512) if QUICK else (4096, 1024)
    x, w, b = torch.randn(m, n), torch.randn(n), torch.randn(n)
    bench(f"row softmax {m}x{n} fp32", RowSoftmax(M=m, N=n), (x,), lambda x: torch.softmax(x, -1))
    bench(f"rms norm {m}x{n} fp32", RMSNorm(M=m, N=n), (x, w),
          lambda x, w: torch.nn.functional.rms_norm(x, (n,), w, 1e-6))
    bench(f"layer norm {m}x{n} fp32", LayerNorm(M=m, N=n), (x, w, b),
          lambda x, w, b: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5))


def bench_gemm() -> None:
    s = 256 if QUICK else 1024
    for dtype, col_major in ((pl.FP32, False), (pl.FP32, True), (pl.BF16, False), (pl.FP16, False)):
        td = dtype.to_torch()
        a, b = torch.randn(s, s).to(td), torch.randn(s, s).to(td)
        op = GEMM(M=s, N=s, K=s, dtype=dtype, b_col_maj=col_major)
        layout = "b col-major, " if col_major else ""
        torch_fn = (lambda a, b: a @ b.T) if col_major else (lambda a, b: a @ b)
        bench(f"gemm {s}^3 {layout}{dtype.name} in, fp32 out", op, (a, b), torch_fn,
              reps=3 if dtype is pl.FP16 else 15, burst=1 if dtype is pl.FP16 else 3)


def bench_attention() -> None:
    h, s, d = (2, 128, 64) if QUICK else (8, 512, 64)
    for dtype in (pl.FP32, pl.BF16):
        td = dtype.to_torch()
        q, k, v = (torch.randn(h, s, d).to(td) for _ in range(3))

        def eager(q, k, v):
            return torch.softmax(q @ k.transpose(-1, -2) * d ** -0.5, dim=-1) @ v

        bench(f"fused attention {h}x{s}x{s}x{d} {dtype.name}", Attention(H=h, S=s, L=s, D=d, dtype=dtype),
              (q, k, v), eager, target=">= 1.5")


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def rows() -> list[tuple[str, float, float, str, str]]:
    """(workload, plang tuned, torch eager, unit, peer) rows for benchmarks/run.py."""
    ROWS.clear()
    bench_rowwise()
    bench_gemm()
    bench_attention()
    return [(name, tuned * 1e3, eager * 1e3, "ms", "torch eager") for name, tuned, _, eager, *_ in ROWS]


def main() -> None:
    load = _load()
    bench_rowwise()
    bench_gemm()
    bench_attention()
    print(f"kernel ISA: {Isa.default().describe()}; device {DEVICE.name}; torch threads "
          f"{torch.get_num_threads()} (OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}); "
          f"load average before: {load}, after: {_load()}")
    print("medians in ms; vs default / vs torch: speed-up of the tuned operator (> 1: faster); best: "
          "vs torch with each side's best round (this machine's load swings the medians)")
    header = (f"{'workload':44} {'tuned':>8} {'default':>8} {'torch':>8} {'vs default':>10} "
              f"{'vs torch':>8} {'best':>6}  {'target':7} tuned tiles (from)")
    print(header)
    for name, tuned, default, eager, best, chosen, source, target in ROWS:
        print(f"{name:44} {tuned * 1e3:8.2f} {default * 1e3:8.2f} {eager * 1e3:8.2f} "
              f"{default / tuned:10.2f} {eager / tuned:8.2f} {best:6.2f}  {target:7} {chosen} ({source})")


if __name__ == "__main__":
    main()
