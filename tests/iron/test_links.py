"""split / join / forward through mem-tile links, against torch."""

from __future__ import annotations

import pytest
import torch
from iron_designs import vec

import plang.iron as iron
from plang.iron import ObjectFifo, ObjectFifoLink, Program, Runtime, Worker


def add_core(k):
    def core(src, dst):
        x, y = src.acquire(1), dst.acquire(1)
        torch.add(x, k, out=y)
        src.release(1)
        dst.release(1)
    core.__name__ = f"add{k}"
    return core


def test_split_over_four_workers_and_join_back():
    n, tile, parts = 4096, 256, 4
    piece = tile // parts
    of_in, of_out = ObjectFifo(vec(tile), name="in"), ObjectFifo(vec(tile), name="out")
    offsets = [i * piece for i in range(parts)]
    ins = of_in.cons().split(offsets, obj_types=[vec(piece)] * parts)
    outs = of_out.prod().join(offsets, obj_types=[vec(piece)] * parts)
    assert [f.name for f in ins] == [None] * parts
    workers = [Worker(add_core(k), [ins[k].cons(), outs[k].prod()]) for k in range(parts)]

    def sequence(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(n), vec(n), of_in.prod(), of_out.cons()])
    design = Program(iron.Device(iron.get_current_device()), rt, workers).resolve_program()
    assert [f.name for f in ins] == [f"in_split{k}" for k in range(parts)]
    assert [f.name for f in outs] == [f"out_join{k}" for k in range(parts)]
    a = torch.arange(n, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    expect = a.view(-1, parts, piece) + torch.arange(parts, dtype=torch.int32).view(1, parts, 1)
    assert torch.equal(c, expect.reshape(-1))


def test_forward_through_a_mem_tile():
    of_in = ObjectFifo(vec(128), name="in")
    fwd = of_in.cons().forward(depth=3)
    of_out = ObjectFifo(vec(128), name="out")
    w = Worker(add_core(5), [fwd.cons(), of_out.prod()])

    def sequence(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(1024), vec(1024), of_in.prod(), of_out.cons()])
    design = Program(iron.get_current_device(), rt, [w]).resolve_program()
    assert fwd.name == "in_fwd" and fwd.depth == 3 and len(design.links) == 1
    a = torch.arange(1024, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    assert torch.equal(c, a + 5)


def test_link_errors():
    of = ObjectFifo(vec(64), name="x")
    with pytest.raises(ValueError, match="Cannot join\\(\\) a cons ObjectFifoHandle"):
        of.cons().join([0, 32], obj_types=[vec(32)] * 2)
    with pytest.raises(ValueError, match="Cannot split\\(\\) a prod ObjectFifoHandle"):
        of.prod().split([0, 32], obj_types=[vec(32)] * 2)
    with pytest.raises(ValueError, match="Cannot forward a prod ObjectFifoHandle"):
        ObjectFifo(vec(64)).prod().forward()
    with pytest.raises(ValueError, match="Number of depths does not match number of offsets"):
        ObjectFifo(vec(64)).cons().split([0, 32], obj_types=[vec(32)] * 2, depths=[2])
    with pytest.raises(ValueError, match="got 1 ports for 2 outputs"):
        ObjectFifo(vec(64)).cons().split([0, 32], obj_types=[vec(32)] * 2, ports=[iron.Port.dma(0)])
    with pytest.raises(ValueError, match="must have at least one source"):
        ObjectFifoLink([], [ObjectFifo(vec(4)).prod()])
    with pytest.raises(ValueError, match="but not both"):
        ObjectFifoLink([ObjectFifo(vec(4)).cons()] * 2, [ObjectFifo(vec(4)).prod()] * 2)
    with pytest.raises(ValueError, match="does not fit"):
        ObjectFifo(vec(64)).cons().split([0, 48], obj_types=[vec(32)] * 2)


def test_dispatch_round_robin_and_merge_keeps_every_object():
    n, tile, k = 2048, 64, 3
    of_in, of_out = ObjectFifo(vec(tile), name="in"), ObjectFifo(vec(tile), name="out")
    turns = of_in.cons().dispatch(k)
    merged = of_out.prod().merge(k)
    seen = [[] for _ in range(k)]

    def worker_for(i):
        def core(src, dst):
            x, y = src.acquire(1), dst.acquire(1)
            seen[i].append(int(x[0]) // tile)
            torch.mul(x, -1, out=y)
            src.release(1)
            dst.release(1)
        return core

    workers = [Worker(worker_for(i), [turns[i].cons(), merged[i].prod()]) for i in range(k)]

    def sequence(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True)

    rt = Runtime(sequence, [vec(n), vec(n), of_in.prod(), of_out.cons()])
    design = Program(iron.get_current_device(), rt, workers).resolve_program()
    assert [f.name for f in turns] == [f"in_dispatch{i}" for i in range(k)]
    a = torch.arange(n, dtype=torch.int32)
    c = torch.zeros_like(a)
    design(a, c)
    for i in range(k):  # object j went to output j mod k
        assert seen[i] == list(range(i, n // tile, k))
    objects = sorted(c.view(-1, tile).tolist())  # arrival order is free; every object arrives once
    assert objects == sorted((-a).view(-1, tile).tolist())
    with pytest.raises(ValueError, match="Cannot merge\\(\\) a cons ObjectFifoHandle"):
        ObjectFifo(vec(4)).cons().merge(2)
    with pytest.raises(ValueError, match="at least two fifos"):
        ObjectFifo(vec(4)).cons().dispatch(1)
    with pytest.raises(ValueError, match="A time link moves whole objects and takes no offsets"):
        ObjectFifoLink([ObjectFifo(vec(4)).cons()], [ObjectFifo(vec(4)).prod(), ObjectFifo(vec(4)).prod()],
                       dst_offsets=[0, 0], mode=iron.ObjectFifoLinkMode.Time)
