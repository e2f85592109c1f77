"""Shared designs of the plang.iron tests: object types and a one-Worker passthrough."""

from __future__ import annotations

import numpy as np

import plang.iron as iron
from plang.iron import ObjectFifo, Program, Runtime, Worker


def vec(n: int, dtype=np.int32):
    return np.ndarray[(n,), np.dtype[dtype]]


def copy_core(src, dst):
    """A core body: one object from `src` copied into `dst`."""
    x, y = src.acquire(1), dst.acquire(1)
    y.copy_(x)
    src.release(1)
    dst.release(1)


def fill_drain(a, c, in_h, out_h):
    """A Runtime sequence: all of `a` into `in_h`, all of `out_h` into `c`."""
    in_h.fill(a)
    out_h.drain(c, wait=True)


def passthrough(n: int, tile: int, depth: int = 2, body=None, while_true: bool = True):
    """fill -> one Worker (copy, or `body(src, dst)`) -> drain, resolved."""
    of_in = ObjectFifo(vec(tile), name="in", depth=depth)
    of_out = ObjectFifo(vec(tile), name="out", depth=depth)
    w = Worker(body or copy_core, [of_in.cons(), of_out.prod()], while_true=while_true)
    rt = Runtime(fill_drain, [vec(n), vec(n), of_in.prod(), of_out.cons()])
    return Program(iron.get_current_device(), rt, workers=[w]).resolve_program()
