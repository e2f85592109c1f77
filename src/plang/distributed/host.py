"""`@pl.jit.host` orchestrators and their distributed run.

Every rank (one MPI process, one simulated chip) runs the host orchestrator's body with
`pl` / `pld` bound to the rank runtime: `pld.alloc_window_buffer` allocates an MPI window
on every rank, `pld.window` is this rank's slice, `pld.world_size()` the rank count, a
host-level collective is the MPI collective, and a dispatch `fn(args..., device=r)` of a
`@pl.jit` program runs on rank r only. A per-rank program without `pld` ops compiles and
runs on the rank's simulated chip like any `@pl.jit` call; one whose kernels communicate
runs as its torch reference with each `pld` op on the rank runtime. The host tensors are
rank 0's (broadcast to every rank when the call starts); what a dispatch writes into an
Out / InOut host tensor is broadcast from the rank that ran it when the body ends, so every
rank returns the same host tensors.
"""

from __future__ import annotations

import functools
import linecache
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from ..codegen.torch_ref import run_torch_ref
from ..codegen.torch_ref_pld import bind_pld
from ..dtypes import DataType
from ..ir.enums import ParamDirection, ReduceOp
from ..ir.expr import Call
from ..ir.ops.registry import Op
from ..ir.visitor import IRVisitor
from ..runtime import ChipWorker, DeviceTensor, RunConfig, Worker
from . import MODULE_NAMES
from .launch import ensure_ranks, report_and_abort, under_launcher
from .prepared import PreparedWorker, returned
from .rank_ops import RankOps
from .runtime import DistributedError


@dataclass
class DistributedConfig:
    """Which ranks a `@pl.jit.host` program runs on: one rank per entry of `device_ids`
    (distinct, non-negative); the other fields are the reference's and have no effect here."""

    device_ids: list[int] = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0

    def __post_init__(self) -> None:
        if not self.device_ids:
            raise ValueError("DistributedConfig.device_ids must not be empty")
        if len(set(self.device_ids)) != len(self.device_ids):
            raise ValueError(f"DistributedConfig.device_ids must be distinct, got {self.device_ids}")
        if any(not isinstance(d, int) or isinstance(d, bool) or d < 0 for d in self.device_ids):
            raise ValueError(f"DistributedConfig.device_ids must be non-negative ints, got {self.device_ids}")
        if self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig.num_sub_workers must be >= 0, got {self.num_sub_workers}")

    @property
    def nranks(self) -> int:
        return len(self.device_ids)


class HostFunction:
    """Created by `@pl.jit.host`: `compile(*args, config=RunConfig(distributed_config=...))`
    gives a DistributedCompiledProgram; calling it compiles and runs."""

    sub_workers: tuple[str, ...] = ()  # (an L3 @pl.program's host has SubWorkers to bind)
    runtime_bound: tuple[str, ...] = ()

    def __init__(self, func: Callable) -> None:
        self._func = func
        functools.update_wrapper(self, func)

    @property
    def name(self) -> str:
        return self._func.__name__

    def compile(self, *args: Any, config=None) -> DistributedCompiledProgram:
        dist = getattr(config, "distributed_config", None)
        if not isinstance(dist, DistributedConfig):
            raise DistributedError(f"@pl.jit.host {self.name}: compile needs "
                                   f"config=RunConfig(distributed_config=DistributedConfig(device_ids=[...]))")
        return DistributedCompiledProgram(self, dist, config)

    def __call__(self, *args: Any, config=None) -> Any:
        return self.compile(*args, config=config)(*args)

    @staticmethod
    def with_outputs(args: Sequence[Any]) -> tuple[tuple[Any, ...], None]:
        """A host function takes every argument (its outputs are the tensors it is given)."""
        return tuple(args), None

    def rank_body(self, ops: RankOps, dispatches: list, callbacks: dict) -> Callable:
        """The body this rank runs: the function with `pl`, `pld` and its dispatches bound."""
        return _rebound(self._func, ops, dispatches)

    def __repr__(self) -> str:
        return f"<pl.jit.host {self.name}>"


class DistributedCompiledProgram:
    """A host orchestrator bound to its DistributedConfig; calling it runs every rank.

    Each rank compiles its per-rank programs when it first dispatches them (the `@pl.jit`
    caches, memory and disk, serve later calls); `output_dir` is None."""

    output_dir = None

    def __init__(self, host: HostFunction, dist: DistributedConfig, config) -> None:
        self.host, self.distributed_config, self.config = host, dist, config

    def __call__(self, *args: Any, config=None) -> Any:
        """Run every rank on `args`; returns what the host body returns. An L3 program called
        with only its non-Out arguments gets fresh Out tensors and returns them (return style)."""
        nranks = self.distributed_config.nranks
        args, allocated = self.host.with_outputs(args)
        if self._launches():  # an L3 @pl.program's IR travels to ranks launched for it
            from .job import run_job

            result = run_job(self, config or self.config, args)
        else:
            timeout = getattr(config or self.config, "pipe_timeout", 30.0)
            result = RankRunner(ensure_ranks(nranks, timeout)).run(self.host, args)
        return returned(result, allocated)

    def _launches(self) -> bool:
        """Whether this process runs the program on ranks launched for it (`job`): an L3
        program of several ranks, called from a process that is not one of them."""
        return getattr(self.host, "program", None) is not None and self.distributed_config.nranks > 1 \
            and not under_launcher()

    def prepare(self, config: RunConfig | None = None, *,
                extra_compiled: Sequence[DistributedCompiledProgram] = (),
                callbacks: dict[str, Callable[..., Any]] | None = None,
                sub_worker_overrides: dict[str, Callable[..., Any]] | None = None,
                persistent: bool = False, reset_persistent_windows: bool | None = None,
                startup_timeout_s: float | None = None):
        """A `DistributedWorker` holding this program (and `extra_compiled`): ranks started
        once, resident tensors shared by every dispatch. `sub_worker_overrides` is the
        reference's older name of `callbacks`. `persistent`: the windows a run allocates are
        kept for the next dispatch, zeroed again unless `reset_persistent_windows=False`.
        Prepared from a process that is not a rank, L3 programs run on ranks launched once
        for the worker (`job.LaunchedWorker`). `config` (the reference's arena prewarm) and
        `startup_timeout_s` are accepted."""
        if callbacks is not None and sub_worker_overrides is not None:
            raise TypeError("prepare: pass callbacks= or its older name sub_worker_overrides=, not both")
        programs = [self, *extra_compiled]
        callbacks = callbacks if callbacks is not None else sub_worker_overrides
        reset = reset_persistent_windows is not False
        if all(p._launches() for p in programs):
            from .job import LaunchedWorker

            return LaunchedWorker(programs, self.config, callbacks=callbacks, persistent=persistent,
                                  reset_windows=reset)
        return DistributedWorker(programs, self.config, callbacks=callbacks, persistent=persistent,
                                 reset_windows=reset)


class RankRunner:
    """This process's rank: runs a host orchestrator's body and its own dispatches."""

    def __init__(self, comm) -> None:
        self.comm = comm

    def run(self, host: HostFunction, args: tuple, callbacks: dict | None = None) -> Any:
        """Run `host`'s body on this rank; returns what it returns (a window tensor as a copy:
        the windows are freed when the body ends)."""
        ops = RankOps(self.comm)
        for a in args:
            if isinstance(a, torch.Tensor):
                _bcast(self.comm, a, 0)
        dispatches: list[tuple[int, torch.Tensor]] = []
        bind_pld(ops)
        result = None
        try:
            result = host.rank_body(ops, dispatches, callbacks or {})(*args)
            for root, out in dispatches:
                _bcast(self.comm, out, root)
            values = tuple(v.clone() if isinstance(v, torch.Tensor) and ops.is_window(v) else v
                           for v in (result if isinstance(result, tuple) else (result,)))
            result = values if isinstance(result, tuple) else values[0]
        except Exception as e:
            if self.comm.nranks == 1:
                raise
            report_and_abort(self.comm, e)
        finally:
            bind_pld(None)
        self.comm.free_windows()
        return result


class DistributedWorker(PreparedWorker, Worker):
    """Distributed programs prepared once on this process's rank, dispatched many times: the
    ranks start once, and the `DeviceTensor`s of `alloc_tensor` live on this rank's chip
    across dispatches of any of the programs (a KV cache written by a prefill program and
    read by every decode step). `persistent`: the windows a run allocates are kept for the
    next run, zeroed again where `reset_windows`."""

    def __init__(self, compiled: DistributedCompiledProgram | Sequence[DistributedCompiledProgram],
                 config: RunConfig | None = None, *,
                 callbacks: dict[str, Callable[..., Any]] | None = None, persistent: bool = False,
                 reset_windows: bool = True) -> None:
        super().__init__(compiled, config, callbacks=callbacks)
        timeout = getattr(self.config, "pipe_timeout", 30.0)
        self._comm = ensure_ranks(self._programs[0].distributed_config.nranks, timeout)
        self._persistent = persistent
        if persistent:
            self._comm.keep_windows(reset_windows)
        self._chip = ChipWorker(self.config)

    @property
    def _owned_tensors(self) -> dict:
        """The reference's name for the resident tensors `alloc_tensor` gave and `close` frees."""
        return self._chip._owned_tensors

    def _dispatch(self, compiled: DistributedCompiledProgram, args: tuple) -> Any:
        """`args`: host tensors and this worker's DeviceTensors."""
        with self._chip.active():
            return RankRunner(self._comm).run(compiled.host, args, self._callbacks)

    def alloc_tensor(self, shape: Sequence[int], dtype: Any, init: Any = None) -> DeviceTensor:
        """A zero-filled tensor resident on this rank's chip (`ChipWorker.alloc_tensor`)."""
        self._check_open("alloc_tensor")
        return self._chip.alloc_tensor(shape, dtype, init)

    def free_tensor(self, tensor: DeviceTensor) -> None:
        self._chip.free_tensor(tensor)

    def close(self) -> None:
        """Release the resident tensors, the kept windows (collective) and the chip, and
        close every handle. Idempotent."""
        if self._persistent and not self.closed:
            self._comm.free_windows(release=True)
        self._chip.close()
        super().close()


def _bcast(comm, t: torch.Tensor, root: int) -> None:
    buf = t.detach().contiguous().clone()
    comm.comm.Bcast(buf.reshape(-1).view(torch.uint8).numpy(), root=root)  # bytes: any dtype (bf16)
    t.copy_(buf)


def _rebound(func: Callable, ops: RankOps, dispatches: list) -> Callable:
    """`func` with its global `pl`, `pld` and `@pl.jit` names bound to the rank runtime."""
    glb = dict(func.__globals__)
    for name in func.__code__.co_names:
        value = glb.get(name)
        module = getattr(value, "__name__", None) if isinstance(value, types.ModuleType) else None
        if module in ("plang", "plang.language"):  # `import plang as pl` or the reference's path
            glb[name] = _HostPl(value)
        elif module in MODULE_NAMES:
            glb[name] = _HostPld(ops, value)
        elif getattr(value, "kind", None) == "orchestration" and hasattr(value, "specialize"):
            glb[name] = _Dispatch(value, ops, dispatches)
    return types.FunctionType(func.__code__, glb, func.__name__, func.__defaults__, func.__closure__)


class _HostPl:
    """`pl` inside a host body: `pl.range` is Python's range; the rest is plang."""

    def __init__(self, pl: Any) -> None:
        self._pl = pl

    @staticmethod
    def range(*args: Any) -> range:
        return range(*(int(a) for a in args))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pl, name)


class _HostPld:
    """`pld` inside a host body: windows, world size and host-level collectives."""

    def __init__(self, ops: RankOps, pld: Any) -> None:
        self._ops, self._pld = ops, pld
        self.tensor = types.SimpleNamespace(
            alloc_window_buffer=self.alloc_window_buffer, window=self.window,
            allreduce=self._allreduce, reduce_scatter=self._reduce_scatter, broadcast=self._broadcast,
            allgather=self._allgather, all_to_all=self._all_to_all, barrier=self._barrier)
        self.system = types.SimpleNamespace(world_size=self.world_size)

    def world_size(self) -> int:
        return self._ops.nranks

    def alloc_window_buffer(self, size: Any, *, dtype: DataType | None = None, name: str = ""):
        if isinstance(size, (list, tuple)):
            if not isinstance(dtype, DataType):
                raise DistributedError("pld.alloc_window_buffer with a shape needs dtype=, "
                                       "e.g. dtype=pl.FP32")
            nbytes = dtype.itemsize
            for d in size:
                nbytes *= int(d)
            size = nbytes
        return self._ops.alloc(int(size), name or _assigned_name(sys._getframe(1)))

    def window(self, buf: Any, shape: Any, dtype: DataType) -> torch.Tensor:
        return self._ops.window(buf, shape, dtype)

    def _allreduce(self, target, signal=None, op: ReduceOp = ReduceOp.Sum, mode: str = "mesh",
                   core_num: int = 1):
        return self._ops.allreduce(target, int(op))

    def _reduce_scatter(self, target, signal=None, op: ReduceOp = ReduceOp.Sum):
        return self._ops.reduce_scatter(target, int(op))

    def _broadcast(self, target, signal=None, root: int = 0):
        return self._ops.broadcast(target, root)

    def _allgather(self, input, target, signal=None):
        return self._ops.allgather(input, target)

    def _all_to_all(self, input, target, signal=None):
        return self._ops.all_to_all(input, target)

    def _barrier(self, signal=None):
        return self._ops.barrier(signal)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pld, name)


def _assigned_name(frame) -> str:
    """The name the host body's line at `frame` assigns (`sig_buf = pld.alloc_window_buffer(...)`
    names the window 'sig_buf', as the reference derives it), else ''."""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    m = re.match(r"\s*([A-Za-z_]\w*)\s*=", line)
    return m.group(1) if m else ""


class _Dispatch:
    """A `@pl.jit` program called from a host body: runs only with `device=` this rank."""

    def __init__(self, fn: Any, ops: RankOps, dispatches: list) -> None:
        self.fn, self.ops, self.dispatches = fn, ops, dispatches

    def __call__(self, *args: Any, device: Any = None, **kwargs: Any) -> None:
        directions = [spec.direction for spec in self.fn.source.params]
        if dispatch_rank(self.ops, self.dispatches, self.fn.name, device, directions, args) == self.ops.rank:
            run_rank_program(self.fn, args, kwargs)


def dispatch_rank(ops: RankOps, dispatches: list, name: str, device: Any,
                  directions: Sequence[ParamDirection], args: Sequence[Any]) -> int:
    """The rank a host body's dispatch of `name` with `device=` runs on (checked), its Out /
    InOut host tensors recorded in `dispatches` for the broadcast at the end of the body."""
    if device is None and ops.nranks > 1:
        raise DistributedError(f"a host dispatch of {name} on {ops.nranks} ranks needs device=<rank>")
    rank = 0 if device is None else int(device)
    if not 0 <= rank < ops.nranks:
        raise DistributedError(f"{name}(..., device={rank}): there are {ops.nranks} ranks")
    for direction, a in zip(directions, args):
        if direction is not ParamDirection.In and isinstance(a, torch.Tensor) and not ops.is_window(a):
            dispatches.append((rank, a))
    return rank


class _PldCalls(IRVisitor):
    visit_types = False

    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, call: Call) -> None:
        if isinstance(call.op, Op) and call.op.name.startswith("pld."):
            self.found = True
        self.generic_visit(call)


def uses_pld(program: Any) -> bool:
    """Whether any function of `program` calls a `pld` op."""
    calls = _PldCalls()
    for f in program.functions.values():
        calls.visit_stmt(f.body)
    return calls.found


def run_rank_program(fn: Any, args: tuple, kwargs: dict) -> None:
    """Run `@pl.jit` program `fn` on this rank: natively on the simulated chip, or as its
    torch reference with the rank runtime when its kernels use `pld` ops."""
    program = fn.specialize(*args, **kwargs)
    if not uses_pld(program):
        fn(*args, **kwargs)
        return
    values = dict(zip(fn.param_names, args), **kwargs)
    entry = program.functions[fn.name]
    run_torch_ref(program, *(values[p.name] for p in entry.params), entry=fn.name)
