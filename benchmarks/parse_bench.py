"""Front-end speed: median parse time of a softmax-sized (~50 lines) and a flash-attention-sized
(~120 lines) program, and print time. Targets on a 2-core machine: parse < 20 ms / < 50 ms,
print < 5 ms. Run: python benchmarks/parse_bench.py"""

from __future__ import annotations

import statistics
import time

import plang as pl

T = "pl.Tensor[[256, 64], pl.FP32]"


def softmax_source() -> str:
    rows = "\n".join(
        f"""            x{i} = pl.load(a, [r + {i * 16}, 0], [16, 64])
            e{i} = pl.exp(x{i})
            y{i} = pl.mul(e{i}, 0.5)
            out = pl.store(y{i}, [r + {i * 16}, 0], out)""" for i in range(8))
    return f"""
import plang as pl


@pl.program
class Softmax:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        for r in pl.range(0, 256, 128):
{rows}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        out = self.kernel(a, out)
        return out
"""


def flash_source() -> str:
    blocks = "\n".join(
        f"""                k{i} = pl.load(k, [j + {i * 16}, 0], [64, 16])
                v{i} = pl.load(v, [j + {i * 16}, 0], [16, 64])
                s{i} = pl.matmul(q0, k{i})
                s{i} = pl.mul(s{i}, 0.125)
                p{i} = pl.exp(s{i})
                pv{i} = pl.matmul(p{i}, v{i})
                acc2 = pl.add(acc2, pv{i})
                m2 = pl.maximum(m2, s{i})
                l2 = pl.add(l2, pv{i})""" for i in range(11))
    return f"""
import plang as pl


@pl.program
class Flash:
    @pl.function(type=pl.FunctionType.InCore)
    def attn(self, q: {T}, k: {T}, v: {T}, out: pl.Out[{T}]) -> {T}:
        for b in pl.range(0, 256, 16):
            q0 = pl.load(q, [b, 0], [16, 64])
            acc = pl.load(out, [b, 0], [16, 64])
            m = pl.load(out, [b, 0], [16, 16])
            l = pl.load(out, [b, 0], [16, 64])
            for j, (acc2, m2, l2) in pl.range(0, 256, 176, init_values=(acc, m, l)):
{blocks}
                acc3, m3, l3 = pl.yield_(acc2, m2, l2)
            o = pl.div(acc3, l3)
            out = pl.store(o, [b, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: {T}, k: {T}, v: {T}, out: pl.Out[{T}]) -> {T}:
        with pl.spmd(4):
            out = self.attn(q, k, v, out)
        return out
"""


def median_ms(fn, repeat: int = 30) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def rows() -> list[tuple[str, float, float, str, str]]:
    """(workload, plang, target, unit, peer name) rows for benchmarks/run.py."""
    out = []
    for name, src, target in (("parse softmax (~50 lines)", softmax_source(), 20.0),
                              ("parse flash-attention (~120 lines)", flash_source(), 50.0)):
        out.append((name, median_ms(lambda s=src: pl.parse(s)), target, "ms", "target"))
    prog = pl.parse(flash_source())
    out.append(("print flash-attention", median_ms(prog.as_python), 5.0, "ms", "target"))
    return out


def main() -> None:
    print(f"{'case':<40}{'median ms':>12}{'target ms':>11}")
    for name, ours, target, _, _ in rows():
        print(f"{name:<40}{ours:>12.2f}{target:>11.1f}")


if __name__ == "__main__":
    main()
