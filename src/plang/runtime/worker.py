"""`ChipWorker`: the explicit-dispatch handle on one simulated chip.

It owns a `Scheduler` (one host thread per core group by default), the `DeviceTensor`s and raw
buffers it allocated and the programs registered on it; `close()` releases all of them. Used as a
context manager it is the *current* worker, so ``compiled(*args)`` runs on it.
"""

from __future__ import annotations

import atexit
import copy
import ctypes
import threading
from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np
import torch

from ..dtypes import DataType
from .chip_callable import RUNTIME_NAME
from .config import RunConfig
from .device_tensor import DeviceTensor, as_torch
from .dump import TensorDumper
from .graph import GraphRecording
from .orchestrator import Orchestrator
from .profiling import Profiler
from .scheduler import Scheduler, TaskError

if TYPE_CHECKING:
    from .compiled import CompiledProgram
    from .direct_launch import DirectLaunch


class ProgramHandle:
    """A program registered on a worker; call it with the program's arguments."""

    def __init__(self, worker: ChipWorker, compiled: CompiledProgram) -> None:
        self.worker, self.compiled = worker, compiled
        self.graphs: dict[str, GraphRecording] = {}  # recorded pl.graph regions, by name

    def __call__(self, *args: Any) -> Any:
        return self.worker._dispatch(self, args)

    def timed(self, *args: Any) -> tuple[Any, Profiler]:
        """Run once, recording every kernel execution into a fresh `Profiler` (no trace file
        is written); returns the result and the profiler."""
        profiler = Profiler()
        return self.worker._dispatch(self, args, profiler), profiler


class Worker(ABC):
    """The dispatch surface every worker shares (the reference's `Worker` base): register a
    compiled program, run it, close."""

    @abstractmethod
    def register(self, compiled: CompiledProgram) -> ProgramHandle:
        """Load `compiled` once and return a reusable handle."""

    @abstractmethod
    def run(self, compiled: CompiledProgram, *args: Any) -> Any:
        """Run `compiled` on `args`."""

    @abstractmethod
    def close(self) -> None:
        """Release everything the worker holds."""


class ChipWorker(Worker):
    _stack: list[ChipWorker] = []
    _defaults: dict[tuple, ChipWorker] = {}  # RunConfig.snapshot() -> its default worker
    _defaults_lock = threading.Lock()
    _plain_default: ChipWorker | None = None  # the default worker of `compiled(*args)` without config

    def __init__(self, config: RunConfig | None = None, runtime: str = RUNTIME_NAME) -> None:
        if runtime != RUNTIME_NAME:
            raise ValueError(f"ChipWorker: runtime {runtime!r} is not available; plang's chip runs "
                             f"{RUNTIME_NAME!r}")
        self.config = config if config is not None else RunConfig()
        if not isinstance(self.config, RunConfig):
            raise TypeError(f"ChipWorker config must be a RunConfig, got {type(self.config).__name__}")
        self.device = self.config.resolved_device()
        self.scheduler = Scheduler(self.config.worker_count(), self.config.pipe_timeout,
                                   self.config.kernel_timeout)
        self.load_count = 0
        self.last_profile: str | None = None
        self.last_summary: str | None = None
        self.last_dumps: list[str] = []  # tensor dump files of the last run (enable_dump_args)
        self._owned_tensors: dict[int, DeviceTensor] = {}
        self._buffers: dict[int, torch.Tensor] = {}  # malloc'd bytes, by address
        self._handles: dict[int, ProgramHandle] = {}
        self._run_lock = threading.Lock()
        self._closed = False

    # ------------------------------------------------------------ memory
    def alloc_tensor(self, shape: Sequence[int], dtype: Any, init: Any = None) -> DeviceTensor:
        """A zero-filled DDR tensor (`dtype`: a plang or torch dtype), optionally copied
        from `init` (tensor, array or scalar)."""
        self._check_open()
        torch_dtype = dtype.to_torch() if isinstance(dtype, DataType) else dtype
        data = torch.zeros(tuple(int(d) for d in shape), dtype=torch_dtype)
        if init is not None:
            source = torch.from_numpy(init) if isinstance(init, np.ndarray) else as_torch(init)
            data.copy_(torch.as_tensor(source, dtype=torch_dtype).expand(data.shape))
        tensor = DeviceTensor(data, self)
        self._owned_tensors[id(tensor)] = tensor
        return tensor

    def free_tensor(self, tensor: DeviceTensor) -> None:
        self._check_open()
        if self._owned_tensors.pop(id(tensor), None) is not tensor:
            raise ValueError("free_tensor: this DeviceTensor is not owned by this worker (or was freed)")
        tensor._release()

    @property
    def tensor_count(self) -> int:
        return len(self._owned_tensors)

    @property
    def aicpu_dlopen_count(self) -> int:
        """The reference's name for `load_count`: how many programs this worker has loaded
        (once each, at their first `register`)."""
        return self.load_count

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """`nbytes` of zeroed chip memory; returns its address (free it with `free`)."""
        self._check_open()
        _local(worker_id, "malloc")
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"malloc: nbytes must be a positive int, got {nbytes!r}")
        buffer = torch.zeros(nbytes, dtype=torch.uint8)
        self._buffers[buffer.data_ptr()] = buffer
        return buffer.data_ptr()

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        self._check_open()
        _local(worker_id, "free")
        if self._buffers.pop(ptr, None) is None:
            raise ValueError(f"free: {ptr:#x} is not an address malloc'd on this worker (or was freed)")

    def copy_to(self, dst_dev_ptr: int, src_host_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        """Host to chip: `nbytes` from host address `src_host_ptr` into chip memory at `dst_dev_ptr`
        (inside a buffer or tensor this worker allocated)."""
        self._check_copy("copy_to", dst_dev_ptr, nbytes, worker_id)
        ctypes.memmove(dst_dev_ptr, src_host_ptr, nbytes)

    def copy_from(self, dst_host_ptr: int, src_dev_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        """Chip to host: `nbytes` of chip memory at `src_dev_ptr` to host address `dst_host_ptr`."""
        self._check_copy("copy_from", src_dev_ptr, nbytes, worker_id)
        ctypes.memmove(dst_host_ptr, src_dev_ptr, nbytes)

    def _check_copy(self, op: str, dev_ptr: int, nbytes: int, worker_id: int) -> None:
        self._check_open()
        _local(worker_id, op)
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"{op}: nbytes must be a positive int, got {nbytes!r}")
        regions = [(b.data_ptr(), b.numel()) for b in self._buffers.values()]
        regions += [(t.data_ptr, t.nbytes) for t in self._owned_tensors.values()]
        if not any(start <= dev_ptr and dev_ptr + nbytes <= start + size for start, size in regions):
            raise ValueError(f"{op}: [{dev_ptr:#x}, +{nbytes}) is not inside memory this worker allocated")

    # ------------------------------------------------------------ programs
    def register(self, compiled: CompiledProgram) -> ProgramHandle:
        """Load `compiled`'s kernels (once per program) and return a reusable handle."""
        self._check_open()
        handle = self._handles.get(id(compiled))
        if handle is None:
            if not (isinstance(getattr(compiled, "kernels", None), dict)
                    and hasattr(compiled, "orchestration")):
                raise TypeError(f"register() takes a CompiledProgram, got {type(compiled).__name__}")
            for kernel in compiled.kernels.values():
                load = getattr(kernel, "load", None)
                if load is not None:
                    load()
            self.load_count += 1
            handle = self._handles[id(compiled)] = ProgramHandle(self, compiled)
        return handle

    @property
    def program_count(self) -> int:
        return len(self._handles)

    def run(self, compiled: CompiledProgram, *args: Any) -> Any:
        return self.register(compiled)(*args)

    def _dispatch(self, handle: ProgramHandle, args: Sequence[Any], timing: Profiler | None = None) -> Any:
        self._check_open()
        compiled = handle.compiled
        for a in args:
            if isinstance(a, DeviceTensor) and a.freed:
                raise RuntimeError(f"{compiled.name}: an argument is a freed DeviceTensor")
        args, outputs = compiled.with_outputs(args)
        compiled.check_args(args)
        direct = self._direct(compiled, timing)
        if direct is not None:
            result = self._launch(compiled, direct, args)
        else:
            result = self._orchestrate(handle, compiled, args, timing)
        if outputs is not None:  # a return-style call: the Out tensors it allocated
            return outputs[0] if len(outputs) == 1 else outputs
        return result

    def run_checked(self, compiled: CompiledProgram, args: Sequence[Any]) -> Any:
        """Run `compiled` on its complete argument list, already checked against its
        signature (torch CPU tensors of its shapes and dtypes, as `plang.operators` checks
        a call's): `run` without checking them again."""
        handle = self.register(compiled)
        direct = self._direct(compiled)
        return handle(*args) if direct is None else self._launch(compiled, direct, args)

    def _direct(self, compiled: CompiledProgram, timing: Profiler | None = None) -> DirectLaunch | None:
        """The one launch `compiled` amounts to (`direct_launch`), unless this run is profiled
        or dumps tensors: those run the orchestration."""
        if timing is not None or self.config.profiling or self.config.enable_dump_args:
            return None
        return compiled.direct_launch

    def _orchestrate(self, handle: ProgramHandle, compiled: CompiledProgram, args: tuple,
                     timing: Profiler | None) -> Any:
        """Run `compiled`'s orchestration on `args` (see `_dispatch`)."""
        level = self.config.enable_dump_args
        dumper = TensorDumper(self.config.resolved_dump_dir(), compiled.name, level) if level else None
        rt = Orchestrator(self.scheduler, compiled.kernels, self.device, dumper, handle.graphs)
        with self._run_lock:
            profiler = self.scheduler.profiler = timing or (Profiler() if self.config.profiling else None)
            try:
                try:
                    try:
                        result = compiled.orchestration(rt, *[as_torch(a) for a in args])
                    finally:
                        self.scheduler.wait()
                except TaskError as e:
                    e.partially_written = compiled.written_params()
                    raise
                result = compiled.finish_result(result, args)
            finally:
                if dumper is not None:
                    self.last_dumps = dumper.paths
                self.scheduler.profiler = None
                if profiler is not None:
                    profiler.finish()
                if profiler is not None and timing is None:
                    self.last_profile = profiler.write(self.config.resolved_profile_dir(), compiled.name)
                    self.last_summary = profiler.summary()
                    print(self.last_summary)
        return result

    def _launch(self, compiled: CompiledProgram, direct: DirectLaunch, args: Sequence[Any]) -> Any:
        """Run a program that is one kernel launch (`direct_launch`) without its orchestration."""
        tensors = tuple(as_torch(a) for a in args)
        with self._run_lock:
            try:
                self.scheduler.launch(compiled.kernels[direct.kernel], direct.kernel_args(tensors),
                                      direct.directions, direct.blocks, direct.kernel)
            except TaskError as e:
                e.partially_written = compiled.written_params()
                raise
        return compiled.finish_result(direct.result(tensors), args)

    # ------------------------------------------------------------ lifetime
    def init(self) -> None:
        """The reference's explicit start; a plang worker is ready once built (no-op when open)."""
        self._check_open()

    @property
    def initialized(self) -> bool:
        return not self._closed

    @property
    def platform(self) -> str:
        return self.config.platform

    @property
    def device_id(self) -> int:
        return self.config.device_id

    def close(self) -> None:
        """Release every tensor, loaded program and thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.scheduler.close()
        for tensor in self._owned_tensors.values():
            tensor._release()
        self._owned_tensors.clear()
        self._buffers.clear()
        self._handles.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("ChipWorker is closed")

    def __enter__(self) -> ChipWorker:
        self._check_open()
        ChipWorker._stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        ChipWorker._stack.remove(self)
        self.close()

    @contextmanager
    def active(self) -> Iterator[ChipWorker]:
        """The current worker for the block (as ``with worker:``), left open after it."""
        self._check_open()
        ChipWorker._stack.append(self)
        try:
            yield self
        finally:
            ChipWorker._stack.remove(self)

    @classmethod
    def current(cls) -> ChipWorker | None:
        """The innermost worker entered with ``with``, if any."""
        return cls._stack[-1] if cls._stack else None

    @classmethod
    def for_call(cls, config: RunConfig | None) -> ChipWorker:
        """The worker a plain ``compiled(*args)`` runs on: the current one, else a shared
        default worker per config (closed at exit)."""
        current = cls.current()
        if config is None:
            if current is not None:
                return current
            worker = cls._plain_default
            if worker is not None and not worker.closed:
                return worker
            worker = cls._plain_default = cls.for_call(RunConfig())
            return worker
        memo = config.__dict__.get("_default_worker")  # (revision, worker): skips hashing the snapshot
        if memo is not None and memo[0] == config.revision and not memo[1].closed:
            return memo[1]
        with cls._defaults_lock:
            key = config.snapshot()
            worker = cls._defaults.get(key)
            if worker is None or worker.closed:
                worker = cls._defaults[key] = ChipWorker(copy.copy(config))
        object.__setattr__(config, "_default_worker", (config.revision, worker))
        return worker


def _local(worker_id: int, op: str) -> None:
    if worker_id != 0:
        raise ValueError(f"ChipWorker.{op}: a chip worker has only worker_id=0, got {worker_id}")


@atexit.register
def _close_default_workers() -> None:
    for worker in ChipWorker._defaults.values():
        worker.close()
