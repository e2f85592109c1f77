"""Two threads compiling and running different `@pl.jit` kernels at once: each first call
parses its own kernel (the parse state is per thread), gets its own spans and the right result."""

import inspect
import sys
import threading

import torch

import plang as pl
from plang.ir.visitor import IRVisitor
from plang.runtime import RunConfig

NO_DISK = RunConfig(disk_cache=False)  # every round must really parse, not restore from disk


@pl.jit.incore
def add_tile(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
    tb = pl.load(b, [0, 0], [b.shape[0], b.shape[1]])
    c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = add_tile(a, b, c)
    return c


@pl.jit.incore
def square_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(x.shape[0] // 8):
        t = pl.load(x, [i * 8, 0], [8, x.shape[1]])
        y = pl.store(pl.mul(t, t), [i * 8, 0], y)
    return y


@pl.jit
def square(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = square_rows(x, y)
    return y


def _lines(*fns) -> set[int]:
    out = set()
    for fn in fns:
        lines, first = inspect.getsourcelines(fn.__wrapped__)
        out.update(range(first, first + len(lines)))
    return out


class _CallSpans(IRVisitor):
    def __init__(self) -> None:
        self.spans = []

    def visit_Call(self, node) -> None:
        self.spans.append(node.span)
        self.generic_visit(node)


def _call_lines(compiled) -> set[int]:
    v = _CallSpans()
    for fn in compiled.program.functions.values():
        v.visit_stmt(fn.body)
    return {s.begin_line for s in v.spans if s.is_known}


def _run_add(rows: int) -> tuple[torch.Tensor, torch.Tensor, object]:
    a, b, c = torch.randn(rows, 64), torch.randn(rows, 64), torch.empty(rows, 64)
    add(a, b, c, config=NO_DISK)
    return c, a + b, add.compile(a, b, c, config=NO_DISK)


def _run_square(cols: int) -> tuple[torch.Tensor, torch.Tensor, object]:
    x, y = torch.randn(32, cols), torch.empty(32, cols)
    square(x, y, config=NO_DISK)
    return y, x * x, square.compile(x, y, config=NO_DISK)


def test_two_threads_compile_and_run_different_kernels_at_once():
    rounds = 4
    barrier = threading.Barrier(2)
    results: dict[str, list] = {"add": [], "square": []}
    errors: list[BaseException] = []

    def worker(name, run, sizes):
        try:
            for size in sizes:
                barrier.wait(timeout=120)  # both first calls of a round start together
                results[name].append(run(size))
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            barrier.abort()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so the two parses interleave
    try:
        rows, cols = [8 * r + 8 for r in range(rounds)], [16 * r + 32 for r in range(rounds)]
        threads = [
            threading.Thread(target=worker, args=("add", _run_add, rows)),
            threading.Thread(target=worker, args=("square", _run_square, cols)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    own = {"add": _lines(add, add_tile), "square": _lines(square, square_rows)}
    for name, runs in results.items():
        assert len(runs) == rounds
        for got, want, compiled in runs:
            torch.testing.assert_close(got, want)
            lines = _call_lines(compiled)
            assert lines and lines <= own[name], f"{name}: IR spans from another kernel: {lines - own[name]}"
