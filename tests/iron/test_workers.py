"""Workers: the two-worker design, while_true exit at the end of a run, failures named,
deadlock within pipe_timeout, placement, memory budgets, fn_args rules, grid, barrier."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from iron_designs import passthrough, vec

import plang.iron as iron
from plang.errors import UnsupportedConstructError
from plang.iron import ObjectFifo, Program, Runtime, Tile, Worker, WorkerRuntimeBarrier
from plang.operators import PerCall
from plang.runtime import ChipWorker, RunConfig
from plang.runtime.scheduler import TaskError


def chain(n: int, tile: int, extra_acquire: bool = False):
    """fill -> w1 (+1) -> 'mid' -> w2 (*2) -> drain; w2 may acquire one object too many."""
    of_in, of_mid, of_out = (ObjectFifo(vec(tile), name=k) for k in ("in", "mid", "out"))
    steps = n // tile

    def inc(src, dst):
        for _ in range(steps):
            x, y = src.acquire(1), dst.acquire(1)
            torch.add(x, 1, out=y)
            src.release(1)
            dst.release(1)

    def dbl(src, dst):
        for _ in range(steps + extra_acquire):
            x, y = src.acquire(1), dst.acquire(1)
            torch.mul(x, 2, out=y)
            src.release(1)
            dst.release(1)

    w1 = Worker(inc, [of_in.cons(), of_mid.prod()], while_true=False)
    w2 = Worker(dbl, [of_mid.cons(), of_out.prod()], while_true=False)

    def sequence(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(n), vec(n), of_in.prod(), of_out.cons()])
    return Program(iron.get_current_device(), rt, [w1, w2]).resolve_program()


def test_two_workers_joined_by_a_fifo():
    design = chain(4096, 512)
    a = torch.randint(-1000, 1000, (4096,), dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(c, (a + 1) * 2)
    design(a * 3, c)  # a second call reuses the design
    assert torch.equal(c, (a * 3 + 1) * 2)


def test_while_true_workers_exit_when_the_run_ends():
    design = passthrough(2048, 128)  # while_true=True by default
    a = torch.arange(2048, dtype=torch.int32)
    c = torch.zeros_like(a)
    start = time.perf_counter()
    design(a, c, config=RunConfig(pipe_timeout=20.0))
    assert time.perf_counter() - start < 5 and torch.equal(a, c)


def test_deadlock_fails_within_pipe_timeout_naming_fifo_and_worker():
    design = chain(1024, 256, extra_acquire=True)
    a = torch.arange(1024, dtype=torch.int32)
    start = time.perf_counter()
    with pytest.raises(TaskError) as info:
        design(a, torch.zeros_like(a), config=RunConfig(pipe_timeout=0.5))
    assert time.perf_counter() - start < 5
    message = str(info.value)
    assert "ObjectFifo 'mid'" in message and "Worker 'dbl'" in message and "timed out" in message


def test_core_exception_names_the_worker():
    def broken(src, dst):
        src.acquire(1)
        raise ZeroDivisionError("bad core")

    design = passthrough(256, 64, body=broken)
    a = torch.arange(256, dtype=torch.int32)
    with pytest.raises(TaskError, match="Worker 'broken'.*ZeroDivisionError: bad core"):
        design(a, torch.zeros_like(a), config=RunConfig(pipe_timeout=5.0))


def test_an_idle_worker_waits_for_the_end():
    design = passthrough(256, 64)
    design.workers.append(Worker(None))
    design.workers[-1].label = "idle"
    a = torch.arange(256, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(a, c)


def test_runs_on_the_current_chip_worker():
    design = passthrough(256, 64)
    a = torch.arange(256, dtype=torch.int32)
    c = torch.zeros_like(a)
    with ChipWorker(RunConfig(pipe_timeout=5.0)) as worker:
        design(a, c)
        assert worker.program_count == 1
    assert torch.equal(a, c)


def test_placement_and_grid():
    dev = iron.Device(iron.get_current_device())
    grid = Worker.grid(2, 3, lambda r, c: Worker(None, tile=Tile(c % dev.cols, 2 + r)))
    assert len(grid) == 2 and len(grid[0]) == 3
    with pytest.raises(ValueError, match="Worker requires a compute tile, but got tile_type="
                                         "AIETileType.MemTile"):
        Worker(None, tile=iron.AnyMemTile)
    of = ObjectFifo(vec(16), name="x")
    w = Worker(lambda h: None, [of.prod()], tile=Tile(0, 1))
    rt = Runtime(lambda h: None, [of.cons()])
    with pytest.raises(ValueError, match="Worker requires a compute tile"):
        Program(dev, rt, [w]).resolve_program()


def test_placement_fills_compute_tiles_in_order():
    design = chain(1024, 256)
    tiles = [(w.tile.col, w.tile.row) for w in design.workers]
    assert tiles == [(0, 2), (0, 3)]


def test_core_memory_budget_is_enforced_at_resolve():
    n = 24 * 1024  # 24 Ki int32 objects: 96 KiB, two fifos at depth 2 = 384 KiB > 192 KiB
    of_in, of_out = ObjectFifo(vec(n), name="big_in"), ObjectFifo(vec(n), name="big_out")
    w = Worker(lambda s, d: None, [of_in.cons(), of_out.prod()])
    rt = Runtime(lambda a, c, i, o: None, [vec(n), vec(n), of_in.prod(), of_out.cons()])
    program = Program(iron.get_current_device(), rt, [w])
    with pytest.raises(ValueError, match=r"needs 394240 bytes of tile memory .* has 196608"):
        program.resolve_program()


def test_fn_args_rules_and_option_messages():
    of = ObjectFifo(vec(16), name="x")
    with pytest.raises(ValueError, match="Cannot give an ObjectFifo directly to a worker"):
        Worker(lambda o: None, [of])
    with pytest.raises(ValueError, match="Worker stack_size must be an int"):
        Worker(None, stack_size=1.5)
    with pytest.raises(ValueError, match="Worker stack_size must be >= 1, but got 0"):
        Worker(None, stack_size=0)
    with pytest.raises(ValueError, match="Worker data_size must be >= 0, but got -1"):
        Worker(None, data_size=-1)
    with pytest.raises(TypeError, match="A Worker cannot take .* computed per call"):
        Worker(lambda n: None, [PerCall("n", iron.DispatchTime[np.int32], np.int32)])
    with pytest.raises(UnsupportedConstructError, match="trace event"):
        Worker(None, trace_events=[1])
    h = of.prod()
    Worker(lambda p: None, [h])
    with pytest.raises(ValueError, match="already belongs to Worker"):
        Worker(lambda p: None, [h])


def test_worker_runtime_barrier():
    barrier = WorkerRuntimeBarrier()
    of_out = ObjectFifo(vec(4), name="out")

    def core(b, dst):
        b.wait_for_value(3, greater_equal=True)
        y = dst.acquire(1)
        y.fill_(42)
        dst.release(1)

    w = Worker(core, [barrier, of_out.prod()], while_true=False)

    def sequence(c, o):
        barrier.set(3)
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(4), of_out.cons()])
    design = Program(iron.get_current_device(), rt, [w]).resolve_program()
    c = torch.zeros(4, dtype=torch.int32)
    design(c)
    assert c.tolist() == [42] * 4
