"""`Orchestrator`: the API a generated orchestration program (``fn(rt, *args)``) calls."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence

import torch

from ..codegen.kernel.abi import BoundsError, check_window
from ..codegen.torch_ref_lib import cast
from ..dtypes import DataType
from ..ir.enums import ParamDirection, ScopeMode
from ..target import Device
from .barriers import participants
from .device_tensor import as_torch
from .dump import TensorDumper
from .graph import GraphRecording
from .pipes import DEFAULT_SLOTS
from .scheduler import GroupMember, Scheduler, Task

_DIRECTIONS = {d.name: d for d in ParamDirection}


def directions(spec: str | Sequence[Any]) -> tuple[ParamDirection, ...]:
    """Directions from names (``"In,Out"`` or a sequence of names / members)."""
    items = spec.split(",") if isinstance(spec, str) else spec
    return tuple(d if isinstance(d, ParamDirection) else _DIRECTIONS[d.strip()] for d in items if d != "")


def _nothing() -> None:
    """The body of a ``pl.system.task_dummy`` task."""


def _element(t: torch.Tensor, indices: Sequence[int], op: str, span: tuple) -> torch.Tensor:
    """The element at `indices`, bounds-checked (a negative index is an error, not Python's
    count from the end)."""
    idx = tuple(int(i) for i in indices)
    check_window(op, t.shape[:len(idx)], idx, [1] * len(idx), span=span)
    return t[idx]


class Orchestrator:
    """Submits a program's kernel tasks to a `Scheduler` during one run."""

    def __init__(self, scheduler: Scheduler, kernels: Mapping[str, Any], device: Device,
                 dumper: TensorDumper | None = None,
                 graphs: dict[str, GraphRecording] | None = None) -> None:
        self.scheduler = scheduler
        self.kernels = kernels
        self.device = device
        self.dumper = dumper
        self.graphs = graphs if graphs is not None else {}  # pl.graph name -> its recording
        self.read_only: dict[int, BoundsError] = {}  # storage of past-the-end slice copies

    def kernel(self, name: str) -> Any:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"program has no kernel {name!r}") from None

    def submit(self, kernel: str, args: Sequence[Any], dirs: Sequence[ParamDirection], *,
               deps: Sequence[Task | None] = (), predicate: Callable[[], Any] | None = None,
               allow_early_resolve: bool = False, core_num: int | None = None,
               sync_start: bool = False, dumps: Sequence[int] = ()) -> Task:
        """Launch kernel `kernel` (SPMD over `core_num` blocks when given); `dumps` are the
        positions of arguments marked for a tensor dump."""
        args = [as_torch(a) for a in args]
        self._refuse_written(args, dirs)
        fn = self.kernel(kernel)
        sites = getattr(fn, "syncall_sites", ())
        barrier = participants(self.device, [(fn, sites[0].core if sites else "AIV", 1)], core_num,
                               sync_start, group=False)
        task = self.scheduler.submit(fn, args, dirs, deps=deps,
                                     predicate=predicate, allow_early_resolve=allow_early_resolve,
                                     blocks=core_num, sync_start=sync_start, name=kernel, barrier=barrier)
        if self.dumper is not None:
            self.dumper.after(self.scheduler, task, kernel, args, dumps)
        return task

    def task_dummy(self, deps: Sequence[Task | None]) -> Task:
        """A task that does nothing, done once every one of `deps` is (``pl.system.task_dummy``)."""
        return self.scheduler.submit(_nothing, deps=deps, name="task_dummy")

    def submit_group(self, name: str, members: Sequence[tuple[str, str, Sequence[Any]]],
                     args: Sequence[Any], dirs: Sequence[ParamDirection], *,
                     deps: Sequence[Task | None] = (), predicate: Callable[[], Any] | None = None,
                     allow_early_resolve: bool = False, core_num: int | None = None,
                     sync_start: bool = False, slots: int = DEFAULT_SLOTS,
                     dumps: Sequence[int] = ()) -> Task:
        """Launch Group `name`: ``members`` are (role, kernel, args) with role ``"AIC"`` (one
        core), ``"AIV"`` (one instance per AIV lane of the core group) or ``"AIV0"`` (a
        lane-unaware vector kernel, on lane 0 only); its pipes are
        `slots` deep (``pl.cross_core_slot``)."""
        launch: list[GroupMember] = []
        cores: list[tuple[Any, str, int]] = []
        for role, kernel, member_args in members:
            lanes = range(self.device.aiv_per_cluster) if role == "AIV" else range(1)
            fn, unwrapped = self.kernel(kernel), tuple(as_torch(a) for a in member_args)
            launch += [GroupMember(fn, unwrapped, lane) for lane in lanes]
            cores.append((fn, role[:3], len(lanes)))
        args = [as_torch(a) for a in args]
        self._refuse_written(args, dirs)
        barrier = participants(self.device, cores, core_num, sync_start, group=True)
        task = self.scheduler.submit_group(launch, args, dirs, deps=deps,
                                           predicate=predicate, allow_early_resolve=allow_early_resolve,
                                           blocks=core_num, sync_start=sync_start, name=name,
                                           slots=slots, barrier=barrier)
        if self.dumper is not None:
            self.dumper.after(self.scheduler, task, name, args, dumps)
        return task

    def scope(self, mode: ScopeMode = ScopeMode.AUTO) -> Any:
        return self.scheduler.scope(mode)

    @contextmanager
    def graph(self, name: str) -> Iterator[None]:
        """A ``pl.graph`` region: recorded the first time this program runs it on this
        worker, replayed afterwards (see `plang.runtime.graph`)."""
        with self.scheduler.graph(name, self.graphs.get(name)) as run:
            yield
        if run.result is not None:
            self.graphs[name] = run.result

    def create_tensor(self, shape: Sequence[int], dtype: DataType, fill: Any = 0) -> torch.Tensor:
        """An intermediate DDR tensor (zero-filled, or filled with `fill`)."""
        shape = tuple(int(d) for d in shape)
        if fill == 0:
            tensor = torch.zeros(shape, dtype=dtype.to_torch())
        else:
            tensor = torch.full(shape, fill, dtype=dtype.to_torch())
        graph = self.scheduler.graph_run
        if graph is not None:
            graph.created_tensor(tensor)
        return tensor

    def view(self, tensor: Any, shape: Sequence[int], offset: Sequence[int],
             drop_dims: Sequence[int] = (), valid: Sequence[int] | None = None, clamp: bool = False,
             span: tuple = ()) -> torch.Tensor:
        """An orchestration-level ``tensor.slice``: the window [offset, offset + shape) of
        `tensor` as a view sharing its storage, clamped to the tensor's extent (`clamp`, or a
        `valid` extent inside it); `drop_dims` are unit axes removed from the view. Offsets
        must be >= 0, else `BoundsError` at `span` (the user's slice). A window reaching past
        the tensor (the reference exposes whatever memory follows) is a copy of the tensor's
        part padded with zeros, taken once the tasks writing the tensor are done; it is
        read-only: a kernel or orchestration write to it is that `BoundsError`."""
        t = as_torch(tensor)
        offs, dims = [int(o) for o in offset], [int(d) for d in shape]
        extents = dims if valid is None else [int(d) for d in valid]
        check_window("tensor.slice", t.shape, offs, [0] * len(offs), True, span)
        window = tuple(slice(o, o + max(0, min(s, n - o))) for s, n, o in zip(dims, t.shape, offs))
        v = t[window]
        if not clamp and any(o + e > n for o, e, n in zip(offs, extents, t.shape)):
            v = self._past_end_copy(t, v, dims, offs, extents, span)
        for d in sorted(drop_dims, reverse=True):
            v = v.squeeze(d)
        return v

    def _past_end_copy(self, t: torch.Tensor, part: torch.Tensor, dims: list[int], offs: list[int],
                       extents: list[int], span: tuple) -> torch.Tensor:
        self.scheduler.wait_for(t)
        copy = torch.zeros(dims + list(t.shape[len(dims):]), dtype=t.dtype)
        copy[tuple(slice(0, n) for n in part.shape)] = part
        try:
            check_window("tensor.slice", t.shape, offs, extents, False, span)
        except BoundsError as e:
            self.read_only[copy.untyped_storage().data_ptr()] = e
        return copy

    def _refuse_written(self, args: Sequence[Any], dirs: Sequence[ParamDirection]) -> None:
        """`refuse_write` for every argument a task writes."""
        if self.read_only:
            for a, d in zip(args, dirs):
                if d in (ParamDirection.Out, ParamDirection.InOut) and isinstance(a, torch.Tensor):
                    self.refuse_write(a)

    def refuse_write(self, tensor: torch.Tensor) -> None:
        """The slice's `BoundsError` when `tensor` is a read-only past-the-end window."""
        error = self.read_only.get(tensor.untyped_storage().data_ptr()) if self.read_only else None
        if error is not None:
            raise BoundsError(f"{error.args[0]}; the window past the tensor's end is a read-only copy, "
                              f"and this program writes it", error.span)

    def reshape(self, tensor: Any, shape: Sequence[int]) -> torch.Tensor:
        """An orchestration-level ``tensor.reshape``: the same storage under a new shape (a
        copy only if the tensor is not contiguous)."""
        return as_torch(tensor).reshape([int(d) for d in shape])

    def transpose(self, tensor: Any, axis1: int, axis2: int) -> torch.Tensor:
        """An orchestration-level ``tensor.transpose``: the tensor with `axis1` and `axis2`
        swapped, as a row-major copy (kernels take tensors with unit innermost stride) made
        once the tasks writing the tensor are done; it is read-only in effect (writes to it
        do not reach the original)."""
        t = as_torch(tensor)
        self.scheduler.wait_for(t)
        return t.transpose(axis1, axis2).contiguous()

    def assemble(self, target: Any, source: Any, offset: Sequence[int], atomic_add: bool = False,
                 span: tuple = ()) -> Any:
        """An orchestration-level ``tensor.assemble``: `source` (converted to the target's
        dtype; a lower-rank source fills the trailing dims) written into `target` at `offset`
        once the tasks writing `source` and those using that window of `target` are done."""
        dst, src = as_torch(target), as_torch(source)
        self.refuse_write(dst)
        src = src.reshape((1,) * (dst.dim() - src.dim()) + tuple(src.shape))
        start = [int(o) for o in offset]
        check_window("tensor.assemble", dst.shape, start, list(src.shape), span=span)
        window = dst[tuple(slice(o, o + n) for o, n in zip(start, src.shape))]
        self.scheduler.wait_for(src)
        self.scheduler.wait_for(window, write=True)
        if src.dtype != dst.dtype:  # the kernels' store conversion (tile.cast's default rules)
            src = cast(src, dst.dtype)
        if atomic_add:
            window.add_(src)
        else:
            window.copy_(src)
        return target

    def read(self, tensor: Any, indices: Sequence[int], span: tuple = ()) -> Any:
        """Orchestration-time read of one element: waits for the tasks writing it."""
        element = _element(as_torch(tensor), indices, "tensor.read", span)
        self.scheduler.wait_for(element)
        return element.item()

    def write(self, tensor: Any, indices: Sequence[int], value: Any, span: tuple = ()) -> Any:
        """Orchestration-time write of one element: waits for the tasks reading or writing
        it, then stores `value`; later tasks see it. Returns the tensor."""
        self.refuse_write(as_torch(tensor))
        element = _element(as_torch(tensor), indices, "tensor.write", span)
        self.scheduler.wait_for(element, write=True)
        element.fill_(value)
        return tensor
