"""`Orchestrator`: the API a generated orchestration program (``fn(rt, *args)``) calls."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence

import torch

from ..dtypes import DataType
from ..ir.enums import ParamDirection, ScopeMode
from ..target import Device
from .device_tensor import as_torch
from .pipes import DEFAULT_SLOTS
from .scheduler import GroupMember, Scheduler, Task

_DIRECTIONS = {d.name: d for d in ParamDirection}


def directions(spec: str | Sequence[Any]) -> tuple[ParamDirection, ...]:
    """Directions from names (``"In,Out"`` or a sequence of names / members)."""
    items = spec.split(",") if isinstance(spec, str) else spec
    return tuple(d if isinstance(d, ParamDirection) else _DIRECTIONS[d.strip()] for d in items if d != "")


class Orchestrator:
    """Submits a program's kernel tasks to a `Scheduler` during one run."""

    def __init__(self, scheduler: Scheduler, kernels: Mapping[str, Any], device: Device) -> None:
        self.scheduler = scheduler
        self.kernels = kernels
        self.device = device

    def kernel(self, name: str) -> Any:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"program has no kernel {name!r}") from None

    def submit(self, kernel: str, args: Sequence[Any], dirs: Sequence[ParamDirection], *,
               deps: Sequence[Task | None] = (), predicate: Callable[[], Any] | None = None,
               allow_early_resolve: bool = False, core_num: int | None = None,
               sync_start: bool = False) -> Task:
        """Launch kernel `kernel` (SPMD over `core_num` blocks when given)."""
        return self.scheduler.submit(self.kernel(kernel), [as_torch(a) for a in args], dirs,
                                     deps=deps,
                                     predicate=predicate, allow_early_resolve=allow_early_resolve,
                                     blocks=core_num, sync_start=sync_start, name=kernel)

    def submit_group(self, name: str, members: Sequence[tuple[str, str, Sequence[Any]]],
                     args: Sequence[Any], dirs: Sequence[ParamDirection], *,
                     deps: Sequence[Task | None] = (), predicate: Callable[[], Any] | None = None,
                     allow_early_resolve: bool = False, core_num: int | None = None,
                     sync_start: bool = False, slots: int = DEFAULT_SLOTS) -> Task:
        """Launch Group `name`: ``members`` are (role, kernel, args) with role ``"AIC"`` (one
        core) or ``"AIV"`` (one instance per AIV lane of the core group); its pipes are
        `slots` deep (``pl.cross_core_slot``)."""
        launch: list[GroupMember] = []
        for role, kernel, member_args in members:
            lanes = range(self.device.aiv_per_cluster) if role == "AIV" else range(1)
            fn, unwrapped = self.kernel(kernel), tuple(as_torch(a) for a in member_args)
            launch += [GroupMember(fn, unwrapped, lane) for lane in lanes]
        return self.scheduler.submit_group(launch, [as_torch(a) for a in args], dirs, deps=deps,
                                           predicate=predicate, allow_early_resolve=allow_early_resolve,
                                           blocks=core_num, sync_start=sync_start, name=name,
                                           slots=slots)

    def scope(self, mode: ScopeMode = ScopeMode.AUTO) -> Any:
        return self.scheduler.scope(mode)

    @contextmanager
    def graph(self, name: str) -> Iterator[None]:
        """A ``pl.graph`` region: its tasks are submitted and tracked like any others (the
        CPU runtime does not record and replay the region's topology)."""
        yield

    def create_tensor(self, shape: Sequence[int], dtype: DataType) -> torch.Tensor:
        """An intermediate DDR tensor (zero-filled)."""
        return torch.zeros(tuple(int(d) for d in shape), dtype=dtype.to_torch())

    def read(self, tensor: Any, indices: Sequence[int]) -> Any:
        """Orchestration-time read of one element: waits for the tensor's writers."""
        tensor = as_torch(tensor)
        self.scheduler.wait_for(tensor)
        return tensor[tuple(int(i) for i in indices)].item()
