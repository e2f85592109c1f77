"""pl.graph record / replay on the scheduler, with Python kernels of random durations."""

import random
import time

import pytest
import torch

from plang.dtypes import FP32
from plang.ir.enums import ParamDirection as D
from plang.runtime.graph import GraphReplayError
from plang.runtime.orchestrator import Orchestrator
from plang.runtime.scheduler import Scheduler
from plang.target import Device


def sleepy(rng):
    pauses = [rng.choice([0, 0, 0.0005, 0.002]) for _ in range(64)]

    def scale(src, dst, k):  # dst = src * 2 + k, slowly
        value = src.clone()
        time.sleep(pauses[k % 64])
        dst.copy_(value * 2 + k)
    return scale


def layer(rt, x, k):
    """Two region tensors: a = 2x + k; b = 2a + k + 1 (row halves); x = 2b + k + 2."""
    a = rt.create_tensor((8,), FP32)
    b = rt.create_tensor((8,), FP32)
    rt.submit("scale", (x, a, k), (D.In, D.Out, D.In))
    rt.submit("scale", (a[:4], b[:4], k + 1), (D.In, D.Out, D.In))
    rt.submit("scale", (a[4:], b[4:], k + 1), (D.In, D.Out, D.In))
    rt.submit("scale", (b, x, k + 2), (D.In, D.Out, D.In))


def reference(x, layers):
    for k in range(layers):
        x = ((x * 2 + k) * 2 + k + 1) * 2 + k + 2
    return x


@pytest.mark.parametrize("seed", range(8))
def test_replays_keep_the_order_with_random_durations(seed):
    rng = random.Random(seed)
    sched = Scheduler(workers=2)
    graphs = {}
    try:
        for _ in range(3):
            rt = Orchestrator(sched, {"scale": sleepy(rng)}, Device(clusters=2), graphs=graphs)
            x = torch.randn(8)
            start = x.clone()
            for k in range(4):
                with rt.graph("layer"):
                    layer(rt, x, k)
            sched.wait()
            torch.testing.assert_close(x, reference(start, 4))
    finally:
        sched.close()
    recording = graphs["layer"]
    assert recording.replays == 11
    assert [r.preds for r in recording.launches] == [(), (0,), (0,), (1, 2)]
    assert recording.skipped_lookups == 6 * 11  # a, a[:4], a[4:], b[:4], b[4:], b per replay


def test_a_tensor_made_in_the_region_is_ordered_after_it():
    """A task after the region reading the region's tensor waits for its last writer,
    whose edge was installed when the replayed region ended."""
    sched = Scheduler(workers=2)
    graphs = {}

    def slow_fill(t, v):
        time.sleep(0.01)
        t.fill_(v)

    try:
        for v in range(4):
            rt = Orchestrator(sched, {"fill": slow_fill, "copy": lambda s, d: d.copy_(s)},
                              Device(clusters=2), graphs=graphs)
            with rt.graph("g"):
                t = rt.create_tensor((4,), FP32)
                rt.submit("fill", (t, v), (D.Out, D.In))
            out = torch.zeros(4)
            rt.submit("copy", (t, out), (D.In, D.Out))
            assert rt.read(t, (0,)) == v
            sched.wait()
            assert out.tolist() == [v] * 4
    finally:
        sched.close()
    assert graphs["g"].replays == 3


def test_a_replay_that_differs_from_the_recording_raises():
    sched = Scheduler(workers=1)
    graphs = {}
    kernels = {"k": lambda *a: None, "other": lambda *a: None}
    try:
        rt = Orchestrator(sched, kernels, Device(clusters=1), graphs=graphs)
        with rt.graph("g"):
            t = rt.create_tensor((4,), FP32)
            rt.submit("k", (t,), (D.Out,))
        with pytest.raises(GraphReplayError, match="'g': launch #0 is other"):
            with rt.graph("g"):
                t = rt.create_tensor((4,), FP32)
                rt.submit("other", (t,), (D.Out,))
        with pytest.raises(GraphReplayError, match="tensor #0 created by the region differs"):
            with rt.graph("g"):
                rt.create_tensor((5,), FP32)
        with pytest.raises(RuntimeError, match="nested"):
            with rt.graph("g"):
                with rt.graph("h"):
                    pass
        sched.wait()
    finally:
        sched.close()
