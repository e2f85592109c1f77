"""`Worker`: a core function on a compute tile, and `WorkerRuntimeBarrier`.

In a run each Worker is a member of the run's Group task on its own core thread, calling
``core_fn(*fn_args)`` once (``while_true=False``) or again and again until the run ends (its
fifos close). Compute happens in kernels (native, GIL released), torch ops on the acquired
objects or plain Python on them."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from ..jit.function import JITFunction
from ..operators.per_call import Affine, PerCall
from . import state
from .device import AIETileType, AnyComputeTile, Tile
from .hardware import hardware_only
from .incore import IncoreKernel
from .objectfifo import ObjectFifo, ObjectFifoHandle
from .runtime import DispatchParameter
from .scratchpad import ScratchpadParameter


def _int_option(name: str, value: Any, minimum: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"Worker {name} must be an int, but got {type(value)}")
    if value < minimum:
        raise ValueError(f"Worker {name} must be >= {minimum}, but got {value}")


def _flatten(args: list) -> list:
    out = []
    for a in args:
        out.extend(_flatten(list(a)) if isinstance(a, (list, tuple)) else [a])
    return out


class Worker:
    """A task to be run on an AIE compute core: here a core thread of the run."""

    def __init__(self, core_fn: Callable | None, fn_args: list | None = None,
                 tile: Tile | None = AnyComputeTile, while_true: bool = True,
                 stack_size: int | None = None, data_size: int | None = None,
                 trace: int | None = None, trace_events: list | None = None,
                 dynamic_objfifo_lowering: bool | None = None,
                 wait_for_parameters: bool = False) -> None:
        if core_fn is not None and not callable(core_fn):
            raise TypeError(f"Worker core_fn must be callable or None, got {type(core_fn).__name__}")
        tile = AnyComputeTile if tile is None else tile
        if not isinstance(tile, Tile):
            raise TypeError(f"Worker tile must be a Tile, got {type(tile).__name__}")
        if tile.tile_type is not None and tile.tile_type is not AIETileType.CoreTile:
            raise ValueError(f"Worker requires a compute tile, but got tile_type={tile.tile_type}")
        _int_option("stack_size", stack_size, 1)
        _int_option("data_size", data_size, 0)
        if trace_events is not None:
            raise hardware_only("Worker(trace_events=...)", "a list of AIE hardware trace event ids")
        self.core_fn, self.while_true = core_fn, while_true
        self.stack_size, self.data_size, self.trace = stack_size, data_size, trace
        self.dynamic_objfifo_lowering = dynamic_objfifo_lowering
        self._tile = tile
        self.fn_args = self._bind(list(fn_args or []))
        if wait_for_parameters and not self.parameters:
            raise ValueError("Worker(wait_for_parameters=True) needs a ScratchpadParameter in "
                             "fn_args: there are no parameters to wait for.")
        self.wait_for_parameters = wait_for_parameters  # each call's values are read at once
        self.placed: Tile | None = tile if tile.placed else None
        self.label = getattr(core_fn, "__name__", "idle")  # made unique by the Program

    def _bind(self, args: list) -> list:
        out = []
        for arg in args:
            if isinstance(arg, (list, tuple)):
                out.append(type(arg)(self._bind(list(arg))))
                continue
            if isinstance(arg, ObjectFifo):
                raise ValueError("Cannot give an ObjectFifo directly to a worker; must give an "
                                 "ObjectFifoHandle obtained through ObjectFifo.prod() or ObjectFifo.cons()")
            if isinstance(arg, (PerCall, Affine, DispatchParameter)):
                raise TypeError(f"A Worker cannot take {arg}, which is computed per call; use "
                                "CompileTime or specialize")
            if isinstance(arg, ObjectFifoHandle):
                if arg.endpoint is not None:
                    raise ValueError(f"{arg} already belongs to {arg.endpoint}")
                arg.endpoint = self
            if isinstance(arg, JITFunction) and arg.kind == "incore":
                arg = IncoreKernel(arg)
            out.append(arg)
        return out

    @property
    def tile(self) -> Tile:
        return self.placed or self._tile

    @property
    def flat_fn_args(self) -> list:
        return _flatten(self.fn_args)

    @property
    def fifos(self) -> list[ObjectFifoHandle]:
        return [a for a in self.flat_fn_args if isinstance(a, ObjectFifoHandle)]

    @property
    def parameters(self) -> list[ScratchpadParameter]:
        return [a for a in self.flat_fn_args if isinstance(a, ScratchpadParameter)]

    @property
    def buffers(self) -> list:
        from .buffer import Buffer

        return [a for a in self.flat_fn_args if isinstance(a, Buffer)]

    def memory_bytes(self, default_stack: int) -> int:
        """What the Worker's tile must hold: its fifo buffers, Buffers, stack and data."""
        return (sum(h.depth * h.nbytes for h in self.fifos)
                + sum(b.nbytes for b in self.buffers)
                + (self.stack_size or default_stack) + (self.data_size or 0))

    @staticmethod
    def grid(rows: int, cols: int, factory: Callable[[int, int], Worker]) -> list[list[Worker]]:
        """Build a 2D grid of Workers; ``factory(r, c)`` returns one Worker."""
        return [[factory(r, c) for c in range(cols)] for r in range(rows)]

    def __repr__(self) -> str:
        return f"Worker '{self.label}' at {self.tile}"


class WorkerRuntimeBarrier:
    """A counter a Worker waits on and the Runtime sequence sets (one value per run)."""

    def __init__(self, initial_value: int = 0) -> None:
        if isinstance(initial_value, bool) or not isinstance(initial_value, int) or initial_value < 0:
            raise ValueError(f"WorkerRuntimeBarrier initial_value must be an int >= 0, got {initial_value!r}")
        self.initial_value = initial_value

    def _state(self) -> list:
        run = state.current_run("WorkerRuntimeBarrier")
        with run.lock:
            return run.barriers.setdefault(id(self), [self.initial_value, threading.Condition()])

    def set(self, value: int) -> None:
        """Set the value (from the Runtime sequence body)."""
        slot = self._state()
        with slot[1]:
            slot[0] = value
            slot[1].notify_all()

    def release_with_value(self, value: int) -> None:
        """Add `value` (from a core)."""
        slot = self._state()
        with slot[1]:
            slot[0] += value
            slot[1].notify_all()

    def wait_for_value(self, value: int, *, greater_equal: bool = False) -> None:
        """Wait until the value equals `value` (or reaches it, consuming it, with
        `greater_equal`); fails the run after the pipe timeout like a fifo wait."""
        run = state.current_run("WorkerRuntimeBarrier.wait_for_value()")
        slot = self._state()
        deadline = time.monotonic() + run.timeout
        with slot[1]:
            while not (slot[0] >= value if greater_equal else slot[0] == value):
                if run.closed.is_set() or run.aborted():
                    raise run.Closed()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"WorkerRuntimeBarrier: waited {run.timeout:g} s for value "
                                       f"{value} (at {slot[0]})")
                slot[1].wait(0.02)
            if greater_equal:
                slot[0] -= value
