"""`Runtime`: the host-side sequence of an IRON design, and what its body uses.

The body (`seq_fn`) runs at every call of the design, on the run's shim lane, with its
`fn_args` turned into per-call values: a tensor type (``np.ndarray[...]`` or a generator's
`In` / `Out` / `InOut` operand) becomes a `RuntimeData` bound to the call's tensor, a scalar
type or a `DispatchTime` parameter the call's integer, an int itself; fifo handles and other
objects pass through. ``handle.fill(...)`` / ``handle.drain(...)`` start a DMA transfer on its
own thread (trace lane ``dma <fifo>``) and return a `Task`; `TaskGroup`\\ s await theirs at
`finish()`. Every transfer has completed when the call returns."""

from __future__ import annotations

import inspect
import threading
import time
from typing import Any, Callable, Sequence, get_origin

import numpy as np
import torch

from ..errors import Error
from ..operators.operands import Operand
from . import state
from .dtype import obj_type_of
from .objectfifo import ObjectFifo, ObjectFifoHandle
from .taps import TensorAccessPattern


class IronRuntimeError(Error, RuntimeError):
    """Raised by the IRON Runtime when resolution encounters an unrecoverable state."""


class DispatchParameter:
    """A generator's `DispatchTime` parameter: forward it to `Runtime` fn_args; the sequence
    body receives the call's value."""

    def __init__(self, name: str, scalar_type: type, design: Any) -> None:
        self.name, self.scalar_type, self.design = name, scalar_type, design

    def __repr__(self) -> str:
        return f"DispatchTime parameter {self.name!r}"

    def __int__(self) -> int:
        raise TypeError(f"{self} has no value while the design is built; the Runtime sequence "
                        "body receives it per call")


def _is_scalar_type(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, np.generic)


def _is_tensor_type(value: Any) -> bool:
    """A tensor type: ``np.ndarray[shape, np.dtype[T]]`` or a generator's operand."""
    return get_origin(value) is np.ndarray or isinstance(value, Operand)


def _flat(args: Sequence) -> list:
    out: list = []
    for a in args:
        out.extend(_flat(a) if isinstance(a, (list, tuple)) else [a])
    return out


class RuntimeData:
    """A runtime buffer of one call: its declared type and, during a run, the call's tensor."""

    def __init__(self, arg_type: Any, index: int, tensor: torch.Tensor | None = None) -> None:
        self.arg_type, self.index = arg_type, index
        self.shape, self.dtype = obj_type_of(arg_type)
        self.tensor = tensor

    def default_tap(self) -> TensorAccessPattern:
        return TensorAccessPattern.full(self.shape)

    def __repr__(self) -> str:
        return f"RuntimeData({self.index}, shape={self.shape}, dtype={self.dtype})"


class Runtime:
    """The host-side sequence of data-movement operations that execute an IRON design."""

    def __init__(self, seq_fn: Callable, fn_args: Sequence | None = None, *, name: str | None = None,
                 strict_task_groups: bool = True, implicit_configure: bool = True) -> None:
        if name == "":
            raise ValueError("Runtime name must not be empty.")
        if not callable(seq_fn):
            raise TypeError(f"Runtime seq_fn must be callable, got {type(seq_fn).__name__}")
        self.seq_fn, self.name = seq_fn, name
        self.strict_task_groups, self.implicit_configure = strict_task_groups, implicit_configure
        self.fn_args = list(fn_args or [])
        seen: set[int] = set()
        designs = {id(a.design) for a in self.fn_args if isinstance(a, DispatchParameter)}
        if len(designs) > 1:
            raise TypeError("Runtime cannot mix DispatchTime parameters from different designs.")
        if designs and any(_is_scalar_type(a) for a in self.fn_args):
            raise TypeError("Runtime cannot mix bare scalar types with DispatchTime parameters.")
        for arg in self.fn_args:
            if isinstance(arg, DispatchParameter):
                if id(arg) in seen:
                    raise TypeError("Forward each DispatchTime parameter exactly once to Runtime.")
                seen.add(id(arg))
            elif isinstance(arg, (list, tuple)) and any(isinstance(a, DispatchParameter) for a in arg):
                bad = next(a for a in arg if isinstance(a, DispatchParameter))
                raise TypeError(f"DispatchTime parameter {bad.name!r} must be a direct Runtime "
                                "fn_args entry.")
        for arg in _flat(self.fn_args):
            if isinstance(arg, ObjectFifo):
                raise ValueError("Cannot give an ObjectFifo directly to a Runtime; must give an "
                                 "ObjectFifoHandle obtained through ObjectFifo.prod() or ObjectFifo.cons()")
            if isinstance(arg, ObjectFifoHandle):
                if arg.endpoint is not None:
                    raise ValueError(f"{arg} already belongs to {arg.endpoint}")
                arg.endpoint = self
        try:
            names = list(inspect.signature(seq_fn).parameters)
        except (TypeError, ValueError):
            names = []
        self._names = names

    @property
    def arg_types(self) -> list[Any]:
        """The call's inputs in order: tensor types and scalar types."""
        return [a for a in self.fn_args if _is_tensor_type(a) or _is_scalar_type(a)]

    @property
    def fifos(self) -> list[ObjectFifoHandle]:
        """The fifo handles in fn_args (lists of them included)."""
        return [a for a in _flat(self.fn_args) if isinstance(a, ObjectFifoHandle)]

    def param_name(self, position: int) -> str:
        return self._names[position] if position < len(self._names) else f"arg{position}"

    def __repr__(self) -> str:
        return f"Runtime({self.name or self.seq_fn.__name__})"


class Task:
    """A handle to a submitted transfer: `await_()` blocks until it completes."""

    def __init__(self, job: Any) -> None:
        self._job, self._freed = job, False

    @property
    def handle(self) -> Any:
        return self._job

    def start(self, repeat_count: int | None = None, repeat_parameter: Any = None) -> Task:
        """Run the transfer again (`repeat_count` more times: default once)."""
        if self._freed:
            raise RuntimeError("Task.start() after Task.free(): the freed buffer descriptors may "
                               "already describe another transfer. Free a task after its last start.")
        if repeat_parameter is not None:
            raise TypeError("Task.start(repeat_parameter=...) is not provided on the CPU chip yet; "
                            "give repeat_count")
        for _ in range(1 if repeat_count is None else repeat_count):
            self._job.restart()
        return self

    def free(self) -> None:
        if self._freed:
            raise RuntimeError("Task.free() called twice on the same task.")
        self._freed = True

    def await_(self) -> None:
        self._job.join()


class TaskGroup:
    """A grouping of runtime data transfers awaited and freed together."""

    def __init__(self, id: int | None = None) -> None:
        run = state.maybe_run()
        if run is None or run.sequence is None:
            raise RuntimeError("TaskGroup() must be constructed within the function passed to "
                               "Runtime(seq_fn, fn_args).")
        self.group_id, self._sequence, self._jobs, self.finished = id, run.sequence, [], False
        self._sequence.groups.append(self)

    def add(self, job: Any) -> None:
        self._jobs.append(job)

    def finish(self) -> None:
        """Await every transfer of the group."""
        if self.finished:
            raise RuntimeError(f"TaskGroup {self.group_id} was already finished")
        self.finished = True
        for job in self._jobs:
            job.join()

    @classmethod
    def pipelined(cls, n: int, depth: int = 2):
        """`n` steps, each with its own group, keeping `depth` groups in flight: yields
        ``(step, group)`` and finishes each group `depth` steps later."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"pipelined depth must be at least 1, got {depth}")
        live: list[TaskGroup] = []
        for step in range(n):
            group = cls(step)
            live.append(group)
            yield step, group
            if len(live) >= depth:
                live.pop(0).finish()
        for group in live:
            group.finish()

    def __repr__(self) -> str:
        return f"TaskGroup({self.group_id})"


class Transfer:
    """One fill / drain of a run, on its own thread; the transfers of one fifo end run in the
    order they were issued (as a DMA channel's task queue does)."""

    def __init__(self, sequence: ActiveSequence, kind: str, handle: ObjectFifoHandle,
                 data: RuntimeData, tap: TensorAccessPattern | None) -> None:
        self.sequence, self.kind, self.handle, self.data, self.tap = sequence, kind, handle, data, tap
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.restart()

    def restart(self) -> None:
        self.join()
        channel = self.sequence.channels
        after = channel.get(id(self.handle))
        self._thread = channel[id(self.handle)] = threading.Thread(
            target=self._move, args=(after,), daemon=True, name=f"plang-iron-dma-{self.handle.name}")
        self._thread.start()

    def _move(self, after: threading.Thread | None) -> None:
        if after is not None:
            after.join()
        run = self.sequence.run
        lane = f"dma {self.handle.name}"
        state.bind(run, lane)
        start = time.perf_counter_ns()
        try:
            port = run.ports[id(self.handle)]
            (port.fill if self.kind == "fill" else port.drain)(self.data.tensor, self.tap)
        except BaseException as exc:  # reported by join(); the other members stop waiting
            self.error = exc
            run.pipes.abort()
        if run.profiler is not None and lane in run.traced_lanes:
            run.record(f"{self.kind} {self.handle.name}", start)

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class ActiveSequence:
    """The Runtime sequence body's state during one run."""

    def __init__(self, run: Any, runtime: Runtime) -> None:
        self.run, self.runtime = run, runtime
        self.groups: list[TaskGroup] = []
        self.jobs: list[Transfer] = []
        self.channels: dict[int, threading.Thread] = {}  # fifo end -> its last transfer
        self.default_jobs = 0
        self.data: list[RuntimeData] = []

    def args(self, inputs: Sequence[Any], dispatch: dict) -> list[Any]:
        """The body's arguments for this call's `inputs` (tensors and scalars, in order)."""
        given = iter(inputs)
        out: list[Any] = []
        for i, arg in enumerate(self.runtime.fn_args):
            if isinstance(arg, DispatchParameter):
                out.append(dispatch[arg.name])
            elif _is_scalar_type(arg):
                out.append(next(given))
            elif _is_tensor_type(arg):
                value = next(given)
                data = RuntimeData(arg, i, value)
                self.data.append(data)
                out.append(data)
            else:
                out.append(arg)
        return out

    def transfer(self, kind: str, handle: ObjectFifoHandle, data: Any, tap: Any, wait: bool,
                 group: TaskGroup | None, managed: bool, parameters: tuple, length_unit: Any) -> Task:
        if not isinstance(data, RuntimeData):
            raise ValueError(f"Expected a RuntimeData source/dest, got {data}")
        if all(data is not d for d in self.data):
            raise ValueError(f"{data} is not a RuntimeData object declared by sequence()")
        if handle.endpoint is not self.runtime:
            raise ValueError(f"{kind}() on {handle}, which is not in this Runtime's fn_args")
        if any(p is not None for p in parameters) or length_unit is not None:
            raise TypeError(f"{kind}(): offset / length / repeat parameters of a transfer are not "
                            "provided on the CPU chip yet; walk the buffer with tap=")
        if not managed and group is not None:
            raise ValueError("An unmanaged transfer (managed=False) is not part of a TaskGroup; do "
                             "not also pass group=.")
        if managed and self.runtime.strict_task_groups and (
                (group is None and self.groups) or (group is not None and self.default_jobs)):
            raise IronRuntimeError("Mixing explicit task groups and the default task group is "
                                   "prohibited. Please assign all tasks to a task group.")
        job = Transfer(self, kind, handle, data, tap)
        self.jobs.append(job)
        if group is not None:
            group.add(job)
        elif managed:
            self.default_jobs += 1
        return Task(job)

    def finalize(self) -> None:
        """Await every transfer (raising the first failure), then check the groups closed."""
        errors = []
        for job in self.jobs:
            try:
                job.join()
            except BaseException as exc:
                errors.append(exc)
        real = [e for e in errors if not isinstance(e, state.RunClosed)]
        if real or errors:
            raise (real or errors)[0]
        open_groups = [g for g in self.groups if not g.finished]
        if open_groups:
            raise IronRuntimeError(f"Failed to close task groups: {open_groups}")


def sync_parameters() -> None:
    """Make the host's parameter writes visible to the cores: immediate on the CPU chip; only
    valid inside a Runtime sequence body."""
    run = state.maybe_run()
    if run is None or run.sequence is None:
        raise RuntimeError("sync_parameters() must be called within the function passed to "
                           "Runtime(seq_fn, fn_args).")
