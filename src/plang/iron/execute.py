"""One call of a `ResolvedDesign`: one Group task on the current `ChipWorker`.

Members: the shim (runs the Runtime sequence; its fills and drains run on their own
threads), every Worker and every link, each on its own core thread, all sharing the task's
`PipeSet`: one ring per (fifo, consumer). When the sequence's transfers have completed and
every ``while_true=False`` Worker has returned, the shim closes the set, so ``while_true``
Workers and links blocked in `acquire` return. A wait past ``RunConfig.pipe_timeout`` fails
the run with the fifo's name and its two ends."""

from __future__ import annotations

import ctypes
import math
import threading
import time
from contextvars import ContextVar
from typing import Any

import torch

from ..dtypes import DataType
from ..ir.enums import ParamDirection
from ..operators.operands import In, InOut, Out
from ..runtime import pipes as pipes_mod
from ..runtime.compiled import CompiledProgram, ParamSpec
from ..runtime.scheduler import GroupMember
from ..runtime.worker import ChipWorker
from . import state
from .buffer import Buffer
from .dtype import obj_type_of, torch_dtype
from .runtime import ActiveSequence, _is_scalar_type, _is_tensor_type
from .state import RunAborted, RunClosed

_PENDING: ContextVar[tuple] = ContextVar("iron_dispatch", default=({}, {}))
_lib = pipes_mod.library()
_pop_ref, _reserve_ref, _push = _lib.plang_pipe_pop_ref, _lib.plang_pipe_reserve_ref, _lib.plang_pipe_push
# calls that never block run with the GIL held: a release + re-acquire per object would hand
# the GIL to another core thread each time (the blocking calls above release it)
_held = ctypes.PyDLL(pipes_mod.library_path())
for _name in ("plang_pipe_try_pop_ref", "plang_pipe_try_reserve_ref", "plang_pipe_free",
              "plang_pipe_commit"):
    _fn = getattr(_held, _name)
    _fn.restype, _fn.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)][
        :1 if _name in ("plang_pipe_free", "plang_pipe_commit") else 2]
_try_pop_ref, _try_reserve_ref = _held.plang_pipe_try_pop_ref, _held.plang_pipe_try_reserve_ref
_free, _commit = _held.plang_pipe_free, _held.plang_pipe_commit
_push_many, _pop_many = _lib.plang_pipe_push_many, _lib.plang_pipe_pop_many
_status = _lib.plang_pipeset_status


def _check(rc: int, fifo: str, op: str) -> None:
    if rc == pipes_mod.CLOSED:
        raise RunClosed()
    if rc == 2:  # aborted
        raise RunAborted()
    raise pipes_mod.PipeError(f"ObjectFifo '{fifo}': {op} {pipes_mod.STATUS.get(rc, rc)}")


class _Port:
    """One end of a fifo in one run: the slots it holds, as torch views of ring memory."""

    def __init__(self, run: Run, handle: Any, rings: list[int]) -> None:
        of = handle.object_fifo
        self.run, self.handle, self.rings, self.name = run, handle, rings, of.name
        self.shape, self.dtype, self.nbytes = handle.shape, torch_dtype(of.dtype), handle.nbytes
        self.numel = math.prod(handle.shape)
        self.held: list[torch.Tensor] = []
        self.views: dict[int, torch.Tensor] = {}
        self.slot = ctypes.c_void_p()
        self.slot_ref = ctypes.byref(self.slot)
        self.wait_name = f"acquire {of.name}"
        self.traced = run.profiler is not None and run.design.lane_of(handle) in run.traced_lanes

    def view(self, addr: int) -> torch.Tensor:
        v = self.views.get(addr)
        if v is None:
            raw = (ctypes.c_char * self.nbytes).from_address(addr)
            v = self.views[addr] = torch.frombuffer(raw, dtype=self.dtype).view(self.shape)
        return v

    def acquire(self, n: int) -> Any:
        held = self.held
        if len(held) < n:
            traced = self.traced
            start = time.perf_counter_ns() if traced else 0
            try_take, take, ring, ref = self._try_take, self._take, self.rings[0], self.slot_ref
            while len(held) < n:
                rc = try_take(ring, ref)
                if rc == pipes_mod.WOULD_BLOCK:
                    rc = take(ring, ref)
                if rc:
                    _check(rc, self.name, "acquire")
                held.append(self.arrived(self.view(self.slot.value)))
            if traced:
                self.run.record(self.wait_name, start)
        return held[0] if n == 1 else held[:n]

    def arrived(self, v: torch.Tensor) -> torch.Tensor:
        return v

    def _count(self, elements: int, verb: str) -> int:
        if elements % self.numel:
            raise ValueError(f"{verb}() of ObjectFifo '{self.name}': {elements} elements are not a "
                             f"whole number of {self.numel}-element objects")
        return elements // self.numel

    def _release_count(self, n: int) -> None:
        if n > len(self.held):
            raise ValueError(f"ObjectFifo '{self.name}': release({n}) but this "
                             f"{self.handle.handle_type} end holds {len(self.held)} objects")


class ConsumerPort(_Port):
    _take, _try_take = staticmethod(_pop_ref), staticmethod(_try_pop_ref)

    def arrived(self, v: torch.Tensor) -> torch.Tensor:
        tap = self.handle.from_stream
        if tap is not None:
            stream = v.reshape(-1).clone()
            tap.scatter(v, stream)
        return v

    def release(self, n: int) -> None:
        self._release_count(n)
        ring = self.rings[0]
        for _ in range(n):
            rc = _free(ring)
            if rc:
                _check(rc, self.name, "release")
            del self.held[0]

    def drain(self, dest: torch.Tensor, tap: Any) -> None:
        """Pop objects into `dest` through `tap` (a whole walk's worth)."""
        count = self._count(tap.transfer_len if tap is not None else dest.numel(), "drain")
        direct = tap is None and dest.is_contiguous() and self.handle.from_stream is None
        flat = dest.reshape(-1) if direct else torch.empty(count * self.numel, dtype=self.dtype)
        rc = _pop_many(self.rings[0], flat.data_ptr(), count, self.nbytes)
        if rc:
            _check(rc, self.name, "drain")
        if self.handle.from_stream is not None:
            objects = flat.view(count, self.numel)
            fs = self.handle.from_stream
            restreamed = torch.empty_like(objects)
            restreamed.as_strided((count, *fs.sizes), (self.numel, *fs.strides)).copy_(
                objects.view(count, *fs.sizes))
            flat = restreamed.reshape(-1)
        if tap is not None:
            tap.scatter(dest, flat)
        elif not direct:
            dest.copy_(flat.view(dest.shape))


class ProducerPort(_Port):
    """A producer end. An asymmetric fifo's producer writes into private staging objects and
    `release` sends each in consumer-sized pieces (rings hold consumer objects)."""

    _take, _try_take = staticmethod(_reserve_ref), staticmethod(_try_reserve_ref)

    def __init__(self, run: Run, handle: Any, rings: list[int]) -> None:
        super().__init__(run, handle, rings)
        of = handle.object_fifo
        self.pieces, self.piece_bytes = of.ratio, of.cons_nbytes
        self.staging = [torch.empty(self.shape, dtype=self.dtype)
                        for _ in range(handle.depth if self.pieces > 1 else 0)]
        self.turn = 0

    def acquire(self, n: int) -> Any:
        if self.pieces == 1:
            return super().acquire(n)
        held = self.held
        while len(held) < n:  # at most depth held, released oldest first: the next one is free
            held.append(self.staging[self.turn % len(self.staging)])
            self.turn += 1
        return held[0] if n == 1 else held[:n]

    def release(self, n: int) -> None:
        self._release_count(n)
        of = self.handle.object_fifo
        for _ in range(n):
            v = self.held.pop(0)
            if of.to_stream is not None:
                v.reshape(-1).copy_(of.to_stream.gather(v).clone())
            if self.pieces == 1:
                self._publish(v.data_ptr())
            else:
                self._send_pieces(v.data_ptr())

    def _send_pieces(self, addr: int) -> None:
        for ring in self.rings:
            for _ in range(self.handle.object_fifo.repeat_count):
                rc = _push_many(ring, addr, self.pieces, self.piece_bytes)
                if rc:
                    _check(rc, self.name, "release")

    def _publish(self, addr: int) -> None:
        repeat = self.handle.object_fifo.repeat_count
        for ring in self.rings[1:]:
            for _ in range(repeat):
                rc = _push(ring, addr, self.nbytes)
                if rc:
                    _check(rc, self.name, "release")
        rc = _commit(self.rings[0])
        if rc:
            _check(rc, self.name, "release")
        for _ in range(repeat - 1):
            rc = _push(self.rings[0], addr, self.nbytes)
            if rc:
                _check(rc, self.name, "release")

    def fill(self, source: torch.Tensor, tap: Any) -> None:
        """Push the objects `tap` walks over `source` (the whole tensor by default)."""
        of = self.handle.object_fifo
        flat = tap.gather(source) if tap is not None else source.reshape(-1)
        count = self._count(flat.numel(), "fill")
        if of.to_stream is not None:
            ts = of.to_stream
            flat = flat.contiguous().view(count, self.numel).as_strided(
                (count, *ts.sizes), (self.numel, *ts.strides)).reshape(-1)
        if of.repeat_count > 1:
            flat = flat.reshape(count, self.numel).repeat_interleave(of.repeat_count, dim=0)
            count *= of.repeat_count
        flat = flat.contiguous()
        codes = [0] * len(self.rings)

        def push_all(i: int) -> None:
            codes[i] = _push_many(self.rings[i], flat.data_ptr(), count * self.pieces, self.piece_bytes)

        threads = [threading.Thread(target=push_all, args=(i,), daemon=True)
                   for i in range(1, len(self.rings))]
        for t in threads:
            t.start()
        push_all(0)
        for t in threads:
            t.join()
        for rc in codes:
            if rc:
                _check(rc, self.name, "fill")


class Run:
    """The state of one call: ports by handle, the sequence, trace lanes, end-of-run events."""

    Closed = RunClosed

    def __init__(self, design: Any, inputs: tuple, pending: tuple, profiler: Any,
                 timeout: float) -> None:
        self.design, self.inputs, self.timeout = design, inputs, timeout
        self.dispatch, self.parameters = pending  # DispatchTime values, ScratchpadParameter values
        self.profiler = profiler if design.traced_lanes else None
        self.traced_lanes = design.traced_lanes if self.profiler is not None else frozenset()
        self.lock = threading.Lock()
        self.pipes: Any = None
        self.ports: dict[int, _Port] = {}
        self.sequence: ActiveSequence | None = None
        self.barriers: dict[int, list] = {}
        self.closed = threading.Event()
        self.once_left = sum(1 for w in design.workers if not w.while_true)
        self.once_done = threading.Event()
        if self.once_left == 0:
            self.once_done.set()
        self.task_id = 0

    def attach(self, pipes: Any, lane: str) -> None:
        """Bind the calling member thread; the first one opens the rings."""
        state.bind(self, lane)
        with self.lock:
            if self.pipes is not None:
                return
            pipes.pipe_name = self.design.pipe_name
            rings: dict[int, list[int]] = {}
            for pipe_id, (f, c, slots) in enumerate(self.design.rings):
                ring = pipes.get(pipe_id, f.cons_nbytes, slots).handle
                rings.setdefault(id(f), []).append(ring)
                self.ports[id(c)] = ConsumerPort(self, c, [ring])
            for f in self.design.fifos:
                port = self.ports[id(f.producer)] = ProducerPort(self, f.producer, rings[id(f)])
                for value in f.init_values or ():
                    data = torch.from_numpy(value.copy()).reshape(-1)
                    for ring in port.rings:
                        rc = _push_many(ring, data.data_ptr(), f.ratio, f.cons_nbytes)
                        if rc:
                            _check(rc, f.name, "init_values")
            self.pipes = pipes

    def traced(self) -> bool:
        return bool(self.traced_lanes) and state.lane() in self.traced_lanes

    def record(self, name: str, start: int) -> None:
        self.profiler.record(state.lane(), name, self.task_id, 0, 0, (), start, time.perf_counter_ns())

    def aborted(self) -> bool:
        return self.pipes is not None and _status(self.pipes.handle, None, None) != 0

    def wait(self, event: threading.Event) -> bool:
        """Wait for `event`; False when the run was aborted first."""
        while not event.wait(0.01):
            if self.aborted():
                return False
        return True

    def once_finished(self) -> None:
        with self.lock:
            self.once_left -= 1
            if self.once_left == 0:
                self.once_done.set()

    def end(self) -> None:
        self.closed.set()
        if self.pipes is not None:
            self.pipes.end_run()


class _Member:
    """A Group member of a run (its ``kernel_name`` names it in errors and profiles)."""

    def __init__(self, run: Run, kernel_name: str) -> None:
        self.run, self.kernel_name = run, kernel_name

    def __call__(self, *, pipes: Any, **_: Any) -> None:
        try:
            self.body(pipes)
        except RunAborted:
            pass
        finally:
            state.bind(None, "host")  # the thread may be the host's or a pool core's


class ShimMember(_Member):
    def body(self, pipes: Any) -> None:
        run = self.run
        run.attach(pipes, "shim")
        rt = run.design.runtime
        sequence = run.sequence = ActiveSequence(run, rt)
        start = time.perf_counter_ns()
        try:
            rt.seq_fn(*sequence.args(run.inputs, run.dispatch))
            sequence.finalize()
            run.wait(run.once_done)
        finally:
            run.end()
            for job in sequence.jobs:  # woken by the close; never leave one touching the rings
                try:
                    job.join()
                except BaseException:
                    pass
        if run.traced():
            run.record(rt.seq_fn.__name__, start)


class WorkerMember(_Member):
    def __init__(self, run: Run, worker: Any) -> None:
        super().__init__(run, f"Worker '{worker.label}'")
        self.worker = worker

    def body(self, pipes: Any) -> None:
        run, w = self.run, self.worker
        run.attach(pipes, w.label)
        args = _core_args(w.fn_args)
        try:
            if w.core_fn is None:
                run.wait(run.closed)
            elif not w.while_true:
                self._once(args)
            else:
                while not run.closed.is_set():
                    self._once(args)
        except RunClosed:
            pass
        finally:
            if not w.while_true:
                run.once_finished()

    def _once(self, args: list) -> None:
        run = self.run
        if not run.traced():
            self.worker.core_fn(*args)
            return
        start = time.perf_counter_ns()
        self.worker.core_fn(*args)
        run.record(f"{self.worker.core_fn.__name__} iteration", start)


def _core_args(args: list) -> list:
    return [type(a)(_core_args(list(a))) if isinstance(a, (list, tuple))
            else a.tensor if isinstance(a, Buffer) else a for a in args]


class LinkMember(_Member):
    def __init__(self, run: Run, link: Any) -> None:
        super().__init__(run, f"link '{link.name}'")
        self.link, self.errors = link, []

    def body(self, pipes: Any) -> None:
        lock = threading.Lock()  # a merge's inputs share the output's producer end
        legs = [threading.Thread(target=self._leg, args=(pipes, lane, lock), daemon=True)
                for lane in range(1, self.link.lanes)]
        for leg in legs:
            leg.start()
        try:
            self._leg(pipes, 0, lock)
        finally:
            for leg in legs:
                leg.join()
        if self.errors:
            raise self.errors[0]

    def _leg(self, pipes: Any, lane: int, lock: threading.Lock) -> None:
        self.run.attach(pipes, self.link.name)
        try:
            while True:
                self.link.step(lane, lock)
        except RunClosed:
            pass
        except BaseException as exc:  # raised by the member thread, after the other legs stop
            self.errors.append(exc)
            self.run.pipes.abort()
        finally:
            state.bind(None, "host")


def _param_specs(design: Any) -> tuple[list[ParamSpec], list[ParamDirection]]:
    specs, dirs = [], []
    for position, arg in enumerate(design.runtime.fn_args):
        name = design.runtime.param_name(position)
        if _is_scalar_type(arg):
            specs.append(ParamSpec(name, DataType.from_torch(torch_dtype(arg))))
            dirs.append(ParamDirection.In)
            continue
        if not _is_tensor_type(arg):
            continue
        direction = {In: ParamDirection.In, Out: ParamDirection.Out, InOut: ParamDirection.InOut}.get(
            type(arg), ParamDirection.InOut)
        shape, dtype = obj_type_of(arg)
        specs.append(ParamSpec(name, DataType.from_torch(torch_dtype(dtype)), shape, direction))
        dirs.append(direction)
    return specs, dirs


def package(design: Any) -> CompiledProgram:
    """The design as a `CompiledProgram` whose orchestration submits one Group task."""
    specs, dirs = _param_specs(design)

    def orchestration(rt: Any, *inputs: Any) -> None:
        scheduler = rt.scheduler
        run = Run(design, inputs, _PENDING.get(), scheduler.profiler, scheduler.pipe_timeout)
        members = [GroupMember(ShimMember(run, "Runtime sequence"))]
        members += [GroupMember(WorkerMember(run, w)) for w in design.workers]
        members += [GroupMember(LinkMember(run, k)) for k in design.links]
        tensors = [a for a in inputs if isinstance(a, torch.Tensor)]
        task = scheduler.submit_group(members, tensors, [d for d, a in zip(dirs, inputs)
                                                         if isinstance(a, torch.Tensor)],
                                      name=f"iron:{design.name}")
        run.task_id = task.id

    return CompiledProgram(f"iron_{design.name}", specs, orchestration, {})


def run_design(design: Any, inputs: tuple, config: Any, dispatch: dict, parameters: dict) -> None:
    """Run one call on the current (or the config's default) `ChipWorker`."""
    compiled = design.compiled()
    worker = ChipWorker.for_call(config)
    token = _PENDING.set((dispatch, parameters))
    flip = bool(design.traced_lanes) and not worker.config.profiling
    if flip:
        worker.config.profiling = True
    try:
        worker.run(compiled, *inputs)
    finally:
        _PENDING.reset(token)
        if flip:
            worker.config.profiling = False
    if design.traced_lanes:
        design.last_trace = worker.last_profile
