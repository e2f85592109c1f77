"""Program.enable_trace: a Perfetto trace with a lane per Worker and slices per kernel call,
iteration and acquire wait; without it, no trace."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from iron_designs import vec

import plang.iron as iron
from plang.errors import UnsupportedConstructError
from plang.iron import ExternalFunction, ObjectFifo, Program, Runtime, Worker

SRC = r"""
#include <stdint.h>
extern "C" void negate(const int32_t *in, int32_t *out, int32_t n) {
    for (int32_t i = 0; i < n; ++i) out[i] = -in[i];
}
"""


def design(trace: bool):
    ty = vec(64)
    neg = ExternalFunction("negate", source_string=SRC, arg_types=[ty, ty, np.int32])
    of_in, of_mid, of_out = (ObjectFifo(ty, name=k) for k in ("in", "mid", "out"))

    def first(src, dst, k):
        x, y = src.acquire(1), dst.acquire(1)
        k(x, y, 64)
        src.release(1)
        dst.release(1)

    def second(src, dst):
        x, y = src.acquire(1), dst.acquire(1)
        y.copy_(x)
        src.release(1)
        dst.release(1)

    w1 = Worker(first, [of_in.cons(), of_mid.prod(), neg])
    w2 = Worker(second, [of_mid.cons(), of_out.prod()])

    def sequence(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(512), vec(512), of_in.prod(), of_out.cons()])
    program = Program(iron.get_current_device(), rt, [w1, w2])
    if trace:
        program.enable_trace(trace_size=1 << 16)
    return program.resolve_program()


def test_trace_has_a_lane_per_worker_and_kernel_slices(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = design(trace=True)
    a = torch.arange(512, dtype=torch.int32)
    c = torch.zeros_like(a)
    d(a, c)
    assert torch.equal(c, -a)
    events = json.load(open(d.last_trace))["traceEvents"]
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    slices = {(lanes[e["tid"]], e["name"]) for e in events if e["ph"] == "X"}
    assert {"first", "second", "shim", "dma in", "dma out"} <= set(lanes.values())
    assert ("first", "kernel negate") in slices and ("first", "acquire in") in slices
    assert ("second", "second iteration") in slices and ("dma out", "drain out") in slices


def test_no_trace_without_enable_trace():
    d = design(trace=False)
    a = torch.arange(512, dtype=torch.int32)
    d(a, torch.zeros_like(a))
    assert d.last_trace is None


def test_hardware_event_lists_are_refused():
    d = design(trace=False).program
    with pytest.raises(UnsupportedConstructError, match="coretile_events"):
        d.enable_trace(coretile_events=[1])
    with pytest.raises(ValueError, match="trace_size must be a positive int"):
        d.enable_trace(trace_size=0)
