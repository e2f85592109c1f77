"""The Runtime sequence: fn_args kinds and errors, task groups, tasks, pipelined steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from iron_designs import passthrough, vec

import plang.iron as iron
from plang.iron import IronRuntimeError, ObjectFifo, Runtime, TaskGroup, TensorAccessPattern
from plang.runtime.scheduler import TaskError


def run_sequence(sequence, n=1024, tile=128):
    design = passthrough(n, tile)
    design.runtime.seq_fn = sequence
    a = torch.arange(n, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    return a, c


def test_explicit_task_group():
    def sequence(a, c, i, o):
        tg = TaskGroup()
        i.fill(a, group=tg)
        o.drain(c, wait=True, group=tg)
        tg.finish()

    a, c = run_sequence(sequence)
    assert torch.equal(a, c)


def test_pipelined_steps_with_taps():
    tiles = [TensorAccessPattern((1024,), k * 256, [256], [1]) for k in range(4)]

    def sequence(a, c, i, o):
        for step, tg in TaskGroup.pipelined(4, depth=2):
            i.fill(a, tap=tiles[step], group=tg)
            o.drain(c, tap=tiles[3 - step], group=tg, wait=True)

    a, c = run_sequence(sequence)
    assert torch.equal(c.view(4, 256), a.view(4, 256).flip(0))


def test_task_await_and_free():
    def sequence(a, c, i, o):
        fill = i.fill(a, managed=False)
        drain = o.drain(c, wait=True, managed=False)
        fill.await_()
        drain.await_()
        drain.free()
        with pytest.raises(RuntimeError, match="Task.free\\(\\) called twice"):
            drain.free()
        with pytest.raises(RuntimeError, match="Task.start\\(\\) after Task.free\\(\\)"):
            drain.start()

    a, c = run_sequence(sequence)
    assert torch.equal(a, c)


def test_task_group_errors():
    with pytest.raises(RuntimeError, match="TaskGroup\\(\\) must be constructed within the function"):
        TaskGroup()
    with pytest.raises(ValueError, match="pipelined depth must be at least 1, got 0"):
        next(TaskGroup.pipelined(2, depth=0))

    def mixing(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True, group=TaskGroup())

    with pytest.raises(TaskError, match="Mixing explicit task groups and the default task group"):
        run_sequence(mixing)

    def unclosed(a, c, i, o):
        tg = TaskGroup(7)
        i.fill(a, group=tg)
        o.drain(c, wait=True, group=tg)

    with pytest.raises(TaskError, match="Failed to close task groups: \\[TaskGroup\\(7\\)\\]"):
        run_sequence(unclosed)
    assert issubclass(IronRuntimeError, RuntimeError)


def test_runtime_fn_args_errors():
    with pytest.raises(ValueError, match="Runtime name must not be empty."):
        Runtime(lambda: None, [], name="")
    with pytest.raises(ValueError, match="Cannot give an ObjectFifo directly to a Runtime"):
        Runtime(lambda f: None, [ObjectFifo(vec(4))])
    with pytest.raises(RuntimeError, match="sync_parameters\\(\\) must be called within"):
        iron.sync_parameters()


def test_scalar_and_constant_fn_args():
    seen = []
    design = passthrough(256, 64)
    rt = design.runtime
    rt.fn_args[2:2] = [np.int32, 5, "tag"]

    def sequence(a, c, k, five, tag, i, o):
        seen.append((k, five, tag))
        i.fill(a)
        o.drain(c, wait=True)

    rt.seq_fn = sequence
    design._compiled = None
    a = torch.arange(256, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c, 9)
    assert seen == [(9, 5, "tag")] and torch.equal(a, c)


def test_fill_that_is_not_whole_objects():
    def sequence(a, c, i, o):
        i.fill(a, tap=TensorAccessPattern((1024,), 0, [100], [1]))
        o.drain(c, wait=True)

    with pytest.raises(TaskError, match="fill\\(\\) of ObjectFifo 'in': 100 elements are not a whole "
                                        "number of 128-element objects"):
        run_sequence(sequence)


def test_scratchpad_parameters_per_call_without_a_build():
    seq_len = iron.ScratchpadParameter("seq_len", np.int32)
    of_out = ObjectFifo(vec(4), name="out")

    def core(p, dst):
        y = dst.acquire(1)
        y.fill_(int(p.read()) * 10)
        dst.release(1)

    w = iron.Worker(core, [seq_len, of_out.prod()], wait_for_parameters=True)

    def sequence(c, o):
        o.drain(c, wait=True)

    design = iron.Program(iron.get_current_device(), Runtime(sequence, [vec(8), of_out.cons()]),
                          [w]).resolve_program()
    for n in (3, 5):
        c = torch.zeros(8, dtype=torch.int32)
        design(c, parameters={"seq_len": n})
        assert c.tolist() == [n * 10] * 8
    with pytest.raises(TypeError, match="has no ScratchpadParameter \\['bogus'\\]"):
        design(c, parameters={"bogus": 1})
    with pytest.raises(TypeError, match="takes an integer"):
        design(c, parameters={"seq_len": 1.5})
    with pytest.raises(TypeError, match="np.float32 is not supported"):
        iron.ScratchpadParameter("f", np.float32)
    with pytest.raises(ValueError, match="needs a ScratchpadParameter in fn_args"):
        iron.Worker(core, [], wait_for_parameters=True)
