"""Single-threaded kernel benchmark: plang (MLIR → native) vs numpy vs torch.

Each plang kernel is built from tile code the way a user writes it (loads, tile ops,
stores in a loop over row blocks), compiled with `plang.codegen.kernel.compile_kernel`.
Run: `python benchmarks/kernels.py [--level x86-64-v3]` (one thread everywhere).
Prints: workload and ISA level, plang, numpy, torch (medians of rounds of consecutive calls,
`timing.rounds`), the ratio to the better peer (of medians and of best rounds), the load
average, and compile latencies.

`--level` (or `$PLANG_ISA`) picks the kernel ISA level; below the host's level the peers are
held to the same instruction set (numpy's dispatch, OpenBLAS's core type, ATen's CPU
capability, oneDNN's ISA), so the table shows what a user of a machine of that level sees.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "--level" in sys.argv:
    os.environ["PLANG_ISA"] = sys.argv[sys.argv.index("--level") + 1]


def _hold_peers_to(level: str) -> None:
    """Environment that keeps numpy / OpenBLAS / torch to the instructions of a level below
    x86-64-v4 (set before any of them, or plang, is imported)."""
    if level not in ("x86-64", "x86-64-v2", "x86-64-v3"):
        return
    v3 = level == "x86-64-v3"
    aten, onednn, openblas = ("avx2", "AVX2", "Haswell") if v3 else ("default", "SSE41", "Nehalem")
    os.environ.update(ATEN_CPU_CAPABILITY=aten, ONEDNN_MAX_CPU_ISA=onednn, OPENBLAS_CORETYPE=openblas)
    # numpy's dispatch targets above the level (numpy 2 names X86_V4 / AVX512_*, numpy 1 names
    # AVX512F / AVX2 ...; unknown names are ignored); numpy's own baseline is x86-64-v2
    above_v3 = "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL"
    os.environ["NPY_DISABLE_CPU_FEATURES"] = above_v3 if v3 else f"X86_V3 AVX AVX2 FMA3 F16C {above_v3}"


_hold_peers_to(os.environ.get("PLANG_ISA", "").split(",")[0].strip())  # before numpy / torch load

from plang.target import Isa  # noqa: E402

LEVEL = Isa.default().spec()

import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from timing import rounds  # noqa: E402

from plang.codegen.kernel import compile_kernel  # noqa: E402
from plang.dtypes import BF16, FP16, FP32, DataType  # noqa: E402
from plang.ir import FunctionType, ParamDirection, TensorType  # noqa: E402
from plang.ir.builder import IRBuilder  # noqa: E402
from plang.ir.ops import make_call  # noqa: E402

torch.set_num_threads(1)
OUT = ParamDirection.Out


def elementwise_fn(name: str, op: str, n_in: int, m: int, n: int, rows: int):
    """for i in range(0, m, rows): out[i:i+rows] = op(x[i:i+rows], ...)."""
    b = IRBuilder()
    with b.function(name, type=FunctionType.InCore) as f:
        ins = [f.param(f"x{k}", TensorType([m, n], FP32)) for k in range(n_in)]
        out = f.param("out", TensorType([m, n], FP32), OUT)
        with b.for_range("i", 0, m, rows) as loop:
            i = loop.var
            tiles = [b.let(f"t{k}", make_call("tile.load", [x, [i, 0], [rows, n]]))
                     for k, x in enumerate(ins)]
            r = b.let("r", make_call(op, tiles))
            b.eval(make_call("tile.store", [r, [i, 0], out]))
    return f.function


def softmax_fn(m: int, n: int, rows: int):
    """Row softmax written with tile ops: max, subtract, exp, sum, divide."""
    b = IRBuilder()
    with b.function("softmax", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([m, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), OUT)
        with b.for_range("i", 0, m, rows) as loop:
            i = loop.var
            t = b.let("t", make_call("tile.load", [x, [i, 0], [rows, n]]))
            tmp = b.let("tmp", make_call("tile.create", [[rows, n]], {"dtype": FP32}))
            mx = b.let("mx", make_call("tile.row_max", [t, tmp]))
            e = b.let("e", make_call("tile.row_expand_expdif", [t, mx]))
            s = b.let("s", make_call("tile.row_sum", [e, tmp]))
            r = b.let("r", make_call("tile.row_expand_div", [e, s]))
            b.eval(make_call("tile.store", [r, [i, 0], out]))
    return f.function


def matmul_fn(dtype: DataType, m: int, n: int, k: int, tm: int, tn: int, tk: int):
    """C[m, n] = A[m, k] @ B[k, n] with an fp32 accumulator tile carried through k."""
    b = IRBuilder()
    with b.function(f"matmul_{dtype.name.lower()}", type=FunctionType.InCore) as f:
        a = f.param("a", TensorType([m, k], dtype))
        bb = f.param("b", TensorType([k, n], dtype))
        c = f.param("c", TensorType([m, n], FP32), OUT)
        with b.for_range("i", 0, m, tm) as li:
            with b.for_range("j", 0, n, tn) as lj:
                at = b.let("a0", make_call("tile.load", [a, [li.var, 0], [tm, tk]]))
                bt = b.let("b0", make_call("tile.load", [bb, [0, lj.var], [tk, tn]]))
                acc0 = b.let("acc0", make_call("tile.matmul", [at, bt]))
                with b.for_range("kk", tk, k, tk, iter_args=[("acc", acc0)]) as lk:
                    at = b.let("a1", make_call("tile.load", [a, [li.var, lk.var], [tm, tk]]))
                    bt = b.let("b1", make_call("tile.load", [bb, [lk.var, lj.var], [tk, tn]]))
                    b.yield_(make_call("tile.matmul_acc", [lk.iter_args[0], at, bt]))
                b.eval(make_call("tile.store", [lk.return_vars[0], [li.var, lj.var], c]))
    return f.function


def compile_timed(function):
    t = time.perf_counter()
    k = compile_kernel(function)
    return k, time.perf_counter() - t


ROWS: list[tuple] = []


def report(name: str, unit: str, work: float, plang_fn, numpy_fn, torch_fn, target: str,
           reps: int = 9, burst: int = 3) -> None:
    times = rounds(plang_fn, numpy_fn, torch_fn, reps=reps, burst=burst)
    vals = [None if t is None else work / t[0] / 1e9 for t in times]
    bests = [None if t is None else work / t[1] / 1e9 for t in times]
    ratio = vals[0] / max(v for v in vals[1:] if v is not None)
    best_ratio = bests[0] / max(v for v in bests[1:] if v is not None)
    ROWS.append((f"{name} @{LEVEL}", unit, *vals, ratio, best_ratio, target))


def guarded(bench, name: str, *args):
    """Run one benchmark; a failure becomes a row carrying its error instead of ending the run."""
    try:
        return bench(*args)
    except Exception as e:  # report and go on
        nan = float("nan")
        ROWS.append((f"{name} @{LEVEL} FAILED: {type(e).__name__}: {str(e)[:80]}", "-", nan, nan, nan, nan,
                     nan, ""))


def bench_elementwise() -> None:
    m = n = 4096
    x, y = torch.randn(m, n), torch.randn(m, n)
    out = torch.empty(m, n)
    xn, yn, on = x.numpy(), y.numpy(), out.numpy()
    k, _ = compile_timed(elementwise_fn("add", "tile.add", 2, m, n, 8))
    k(x, y, out)
    assert torch.equal(out, x + y)
    nbytes = 3 * m * n * 4
    report("add 4096x4096 fp32", "GB/s", nbytes, lambda: k(x, y, out),
           lambda: np.add(xn, yn, out=on), lambda: torch.add(x, y, out=out), ">= 0.95")
    k, _ = compile_timed(elementwise_fn("exp", "tile.exp", 1, m, n, 8))
    k(x, out)
    torch.testing.assert_close(out, torch.exp(x), rtol=1e-6, atol=0)
    nbytes = 2 * m * n * 4
    report("exp 4096x4096 fp32", "GB/s", nbytes, lambda: k(x, out),
           lambda: np.exp(xn, out=on), lambda: torch.exp(x, out=out), ">= 1.3")


def bench_softmax(rows: int):
    m, n = 4096, 1024
    x = torch.randn(m, n)
    out = torch.empty(m, n)
    xn = x.numpy()
    fn = softmax_fn(m, n, rows)
    k, _ = compile_timed(fn)
    k(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)

    def np_softmax():
        e = np.exp(xn - xn.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    # torch writes into a preallocated tensor too: torch.softmax allocates its 16 MB result
    # per call and, depending on the allocator's state, page-faults it in (3.5 vs 14 GB/s)
    t_out = torch.empty(m, n)

    def torch_softmax():
        return torch.ops.aten._softmax.out(x, -1, False, out=t_out)

    nbytes = 2 * m * n * 4
    report(f"softmax 4096x1024 fp32 ({rows}-row tiles)", "GB/s", nbytes, lambda: k(x, out), np_softmax,
           torch_softmax, ">= 1.5")
    return fn


def bench_matmul() -> None:
    m = n = kk = 1024
    for dtype, target in ((FP32, ">= 0.95"), (BF16, ">= 0.9"), (FP16, ">= 50 (torch)")):
        td = dtype.to_torch()
        a, b = torch.randn(m, kk).to(td), torch.randn(kk, n).to(td)
        c = torch.empty(m, n)
        k, _ = compile_timed(matmul_fn(dtype, m, n, kk, 64, 256, 256))
        k(a, b, c)
        torch.testing.assert_close(c, a.float() @ b.float(), rtol=2e-3, atol=2e-3)
        flops = 2.0 * m * n * kk
        np_fn = None
        if dtype is FP32:
            an, bn = a.numpy(), b.numpy()

            def np_fn():
                return an @ bn
        report(f"matmul 1024^3 {dtype.name} in, fp32 acc", "GFLOP/s", flops, lambda: k(a, b, c), np_fn,
               lambda: torch.matmul(a, b), target, reps=2 if dtype is FP16 else 7,
               burst=1 if dtype is FP16 else 3)


def bench_compile_and_load(fn) -> None:
    times = []
    for _ in range(5):
        kern, dt = compile_timed(fn)
        times.append(dt)
    compile_s = statistics.median(times)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "softmax.so")
        kern.save(path)
        code = ("import time,sys; t=time.perf_counter(); "
                "from plang.codegen.kernel import load_kernel; import plang.codegen.kernel.kernel as K; "
                "t=time.perf_counter(); k=load_kernel(sys.argv[1]); print(time.perf_counter()-t)")
        load_s = statistics.median(float(subprocess.check_output([sys.executable, "-c", code, path]))
                                   for _ in range(3))
    print(f"\ncompile softmax kernel (build + lower + JIT): {compile_s * 1e3:.1f} ms median "
          "(target < 100 ms)")
    print(f"load persisted kernel in a new process: {load_s * 1e3:.2f} ms "
          f"= {100 * load_s / compile_s:.1f}% of compile (target < 5%)")


def _cell(v: float | None) -> str:
    return f"{v:8.1f}" if v is not None and v == v else f"{'-':>8}"


def _load_average() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def rows() -> list[tuple[str, float, float, str, str]]:
    """(workload, plang, better peer, unit, peer name) rows for benchmarks/run.py."""
    ROWS.clear()
    guarded(bench_elementwise, "add / exp")
    guarded(bench_softmax, "softmax", 8)
    guarded(bench_matmul, "matmul")
    out = []
    for name, unit, p, nmp, tch, _, _, _ in ROWS:
        peers = [(v, who) for v, who in ((nmp, "numpy"), (tch, "torch eager")) if v is not None and v == v]
        peer, who = max(peers) if peers else (float("nan"), "-")
        out.append((name, p, peer, unit, who))
    return out


def main() -> None:
    load = _load_average()
    guarded(bench_elementwise, "add / exp")
    fn = guarded(bench_softmax, "softmax", 8)
    guarded(bench_softmax, "softmax", 1)
    if "--no-matmul" not in sys.argv:
        guarded(bench_matmul, "matmul")
    print(f"kernel ISA: {Isa.default().describe()}; load average before: {load}, after: {_load_average()}")
    print("plang / numpy / torch: medians; ratio: plang's median over the better peer's median; "
          "best: the same with each one's best repetition (torch's softmax speed flips run to run)")
    header = f"{'workload':48} {'unit':8} {'plang':>8} {'numpy':>8} {'torch':>8} {'ratio':>7} {'best':>6}"
    print(f"{header}  target")
    for name, unit, p, nmp, tch, ratio, best, target in ROWS:
        print(f"{name:48} {unit:8} {_cell(p)} {_cell(nmp)} {_cell(tch)} {ratio:7.2f} {best:6.2f}  {target}")
    if fn is not None:
        bench_compile_and_load(fn)


if __name__ == "__main__":
    main()
