"""ObjectFifo rings: passthrough, depth bounds, acquire(n), broadcast, taps, repeat_count,
init_values and every constructor / handle error."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from iron_designs import copy_core, fill_drain, passthrough, vec

import plang.iron as iron
from plang.errors import UnsupportedConstructError
from plang.iron import ObjectFifo, Program, Runtime, TensorAccessPattern, Worker


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_passthrough_is_bit_exact(depth):
    design = passthrough(4096, 256, depth)
    a = torch.randint(-2**31, 2**31 - 1, (4096,), dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(a, c)


def test_producer_never_holds_more_than_depth():
    held = []

    def body(src, dst):
        xs = [src.acquire(1)]
        ys = dst.acquire(2)  # depth 2: two slots at most
        held.append(len(ys))
        ys[0].copy_(xs[0])
        src.release(1)
        x2 = src.acquire(1)
        ys[1].copy_(x2)
        src.release(1)
        dst.release(2)

    design = passthrough(1024, 64, 2, body)
    a = torch.arange(1024, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(a, c) and set(held) == {2}


def test_acquire_more_than_depth_is_refused():
    of = ObjectFifo(vec(16), name="x", depth=2)
    with pytest.raises(ValueError, match="Number of elements to acquire 3 must be smaller than depth 2"):
        of.prod().acquire(3)
    with pytest.raises(ValueError, match="Number of elements to release 3 must be smaller than depth 2"):
        of.cons().release(3)


def test_acquire_outside_a_run_says_where_it_belongs():
    with pytest.raises(RuntimeError, match="inside a Program run"):
        ObjectFifo(vec(16), name="x").prod().acquire(1)


def test_acquire_two_after_one_takes_one_more():
    seen = []

    def body(src, dst):
        first = src.acquire(1)
        both = src.acquire(2)
        seen.append(both[0].data_ptr() == first.data_ptr())
        for x in both:
            y = dst.acquire(1)
            y.copy_(x)
            dst.release(1)
        src.release(2)

    design = passthrough(512, 64, 2, body)
    a = torch.arange(512, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(a, c) and all(seen)


def test_broadcast_to_two_consumers():
    of_in = ObjectFifo(vec(64), name="in")
    outs = [ObjectFifo(vec(64), name=f"out{i}") for i in range(2)]
    cons = [of_in.cons(), of_in.cons()]
    assert cons[0] is not cons[1] and of_in.prod() is of_in.prod()

    def add_k(k):
        def core(src, dst):
            x, y = src.acquire(1), dst.acquire(1)
            y.copy_(x + k)
            src.release(1)
            dst.release(1)
        return core

    workers = [Worker(add_k(k), [cons[k], outs[k].prod()]) for k in range(2)]

    def sequence(a, c0, c1, i, o0, o1):
        i.fill(a)
        o0.drain(c0, wait=True)
        o1.drain(c1, wait=True)

    rt = Runtime(sequence, [vec(1024)] * 3 + [of_in.prod(), outs[0].cons(), outs[1].cons()])
    design = Program(iron.get_current_device(), rt, workers).resolve_program()
    a = torch.arange(1024, dtype=torch.int32)
    c0, c1 = torch.zeros_like(a), torch.zeros_like(a)
    design(a, c0, c1)
    assert torch.equal(c0, a) and torch.equal(c1, a + 1)


def test_fill_and_drain_walk_taps():
    # fill the transpose of a 32x32 matrix, 4 rows of it per object
    design = passthrough(1024, 128)
    a = torch.arange(1024, dtype=torch.int32)
    c = torch.zeros_like(a)

    def sequence(x, y, i, o):
        i.fill(x, tap=TensorAccessPattern((32, 32), 0, [32, 32], [1, 32]))
        o.drain(y, wait=True)

    design.runtime.seq_fn = sequence
    design(a, c)
    assert torch.equal(c, a.view(32, 32).t().reshape(-1))


def test_to_stream_and_from_stream_reorder_each_object():
    walk = TensorAccessPattern((4, 4), 0, [4, 4], [1, 4])  # transpose one 4x4 object
    of_in = ObjectFifo(vec(16), name="in", to_stream=walk)
    of_out = ObjectFifo(vec(16), name="out")

    w = Worker(copy_core, [of_in.cons(), of_out.prod()])

    rt = Runtime(fill_drain, [vec(64), vec(64), of_in.prod(), of_out.cons(from_stream=walk)])
    design = Program(iron.get_current_device(), rt, [w]).resolve_program()
    a = torch.arange(64, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(c, a)  # transposed on the way in, back on the way out
    # and the Worker saw the transposed objects
    seen = []
    w.core_fn = lambda src, dst: (seen.append(src.acquire(1).clone()), copy_core(src, dst))
    c.zero_()
    design(a, c)
    assert torch.equal(seen[0], a[:16].view(4, 4).t().reshape(-1))


def test_fill_takes_the_sequences_runtime_data_only():
    design = passthrough(256, 64)
    a = torch.arange(256, dtype=torch.int32)

    def sequence(x, y, i, o):
        i.fill(a)  # a tensor of the caller, not the sequence's RuntimeData
        o.drain(y, wait=True)

    design.runtime.seq_fn = sequence
    with pytest.raises(Exception, match="Expected a RuntimeData source/dest, got tensor"):
        design(a, torch.zeros_like(a))


def test_repeat_count_in_a_design():
    of_in = ObjectFifo(vec(64), name="in", repeat_count=3)
    of_out = ObjectFifo(vec(64), name="out")

    w = Worker(copy_core, [of_in.cons(), of_out.prod()])

    rt = Runtime(fill_drain, [vec(128), vec(384), of_in.prod(), of_out.cons()])
    design = Program(iron.get_current_device(), rt, [w]).resolve_program()
    a = torch.arange(128, dtype=torch.int32)
    c = torch.zeros(384, dtype=torch.int32)
    design(a, c)
    assert torch.equal(c.view(2, 3, 64), a.view(2, 1, 64).expand(2, 3, 64))


def test_init_values_are_consumed_first():
    init = [np.full(16, 7, np.int32), np.full(16, 9, np.int32)]
    of = ObjectFifo(vec(16), name="pre", depth=2, init_values=init)
    of_out = ObjectFifo(vec(16), name="out")

    def core(src, dst):
        for _ in range(2):
            copy_core(src, dst)

    def idle(p):
        pass

    w = Worker(core, [of.cons(), of_out.prod()], while_true=False)
    w0 = Worker(idle, [of.prod()], while_true=False)

    def sequence(c, o):
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(32), of_out.cons()])
    design = Program(iron.get_current_device(), rt, [w, w0]).resolve_program()
    c = torch.zeros(32, dtype=torch.int32)
    design(c)
    assert c[:16].tolist() == [7] * 16 and c[16:].tolist() == [9] * 16


def test_constructor_and_handle_errors():
    t = vec(16)
    with pytest.raises(ValueError, match="Default ObjectFifo depth must be > 0, but got 0"):
        ObjectFifo(t, depth=0)
    with pytest.raises(ValueError, match="Must specify either ObjectFifoHandle depth or ObjectFifo "
                                         "default depth; both are None."):
        ObjectFifo(t, depth=None).prod()
    with pytest.raises(ValueError, match="Depth must be > 0 but is 0"):
        ObjectFifo(t).cons(depth=0)
    of = ObjectFifo(t, name="x")
    with pytest.raises(ValueError, match=r"fill\(\) is only valid on a producer ObjectFifoHandle"):
        of.cons().fill(None)
    with pytest.raises(ValueError, match=r"drain\(\) is only valid on a consumer ObjectFifoHandle"):
        of.prod().drain(None)
    with pytest.raises(TypeError, match="to_stream must be a TensorAccessPattern"):
        ObjectFifo(t, to_stream=[1, 2])
    with pytest.raises(ValueError, match="Iter count must be in"):
        of.set_iter_count(0)
    with pytest.raises(ValueError, match="Cannot return prod.tile.op"):
        ObjectFifo(t).tiles()
    with pytest.raises(TypeError, match="every dimension must be a positive integer"):
        ObjectFifo(np.ndarray[(0,), np.dtype[np.int32]])
    with pytest.raises(UnsupportedConstructError, match="PLIO"):
        ObjectFifo(t, plio=True)
    with pytest.raises(UnsupportedConstructError, match="unsynchronized"):
        ObjectFifo(t, disable_synchronization=True)
    with pytest.raises(UnsupportedConstructError, match="packet"):
        ObjectFifo(t, transport=iron.Transport.dma(packet=object()))
    assert ObjectFifo(t, transport=iron.Transport.shared_mem()).transport.kind == "shared_mem"


def test_unconsumed_handle_fails_at_resolve_not_construction():
    of_in = ObjectFifo(vec(16), name="in")
    of_in.cons()  # given to nobody
    rt = Runtime(lambda i: i.fill(None), [of_in.prod()])
    program = Program(iron.get_current_device(), rt)
    with pytest.raises(ValueError, match="ObjectFifo 'in': consumer handle 0 is given to no Worker"):
        program.resolve_program()


def test_asymmetric_fifo_sends_each_object_in_consumer_sized_pieces():
    of_in = ObjectFifo(vec(256), name="in", consumer_obj_type=vec(64))  # shim -> pieces of 64
    of_mid = ObjectFifo(vec(128), name="mid", consumer_obj_type=vec(32))  # Worker -> pieces of 32
    of_out = ObjectFifo(vec(32), name="out")
    assert of_in.consumer_obj_type == vec(64) and of_in.cons().shape == (64,)

    def widen(src, dst):  # two 64-element pieces make one 128-element object
        y = dst.acquire(1)
        xs = src.acquire(2)
        y[:64].copy_(xs[0])
        y[64:].copy_(xs[1])
        src.release(2)
        dst.release(1)

    def inc(src, dst):
        x, y = src.acquire(1), dst.acquire(1)
        torch.add(x, 1, out=y)
        src.release(1)
        dst.release(1)

    w1 = Worker(widen, [of_in.consumers[0], of_mid.prod()])
    w2 = Worker(inc, [of_mid.cons(), of_out.prod()])
    rt = Runtime(fill_drain, [vec(2048), vec(2048), of_in.prod(), of_out.cons()])
    design = Program(iron.get_current_device(), rt, [w1, w2]).resolve_program()
    a = torch.arange(2048, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(c, a + 1)
    with pytest.raises(ValueError, match="Producer element count must be an integer multiple"):
        ObjectFifo(vec(100), consumer_obj_type=vec(64))
