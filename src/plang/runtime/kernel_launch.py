"""`LaunchableKernel`: a compiled kernel (`plang.codegen.kernel.Kernel`) behind the
scheduler's calling convention, with the kernel ABI's `PipeApi` served by the runtime's
ring buffers.

The scheduler calls ``kernel(*args)`` (plain), ``kernel(*args, block_idx=, block_num=)``
(SPMD) or ``kernel(*args, pipes=<PipeSet>, subblock_idx=, block_idx=, block_num=)`` (Group
member), plus ``barrier=<LaunchBarrier>`` in a launch with a `pl.system.syncall`
(`plang.runtime.barriers`); the wrapper fills the calling thread's `LaunchContext` (built
once per thread and kernel, then reused) and calls ``kernel.launch(args, ctx)``.

Pipes: kernels open their rings by id (`abi.pipe_id`: crossing, direction, AIV lane) in
the Group's `PipeSet` through ``native/pipe_adapter.c``, which forwards to the runtime's C
functions and never hands a kernel a NULL pipe. Failures (a timeout, the two ends opening
a ring with different tile sizes) are recorded in the `PipeSet` and wake the other members;
the scheduler raises them as `TaskGroupError`, a directly launched kernel as `PipeError`,
naming the pipe by crossing, direction and lane. A kernel launched without a pipe set that
uses a pipe raises `PipeError` when it returns.

Cancellation: the launch context's cancel word is the thread's current `CancelToken`
(`plang.runtime.cancel`: a Group's shared token, a watched task's, a barrier launch's) or the
launch's own word; a launch whose token was cancelled raises `KernelCancelled` when the
kernel returns.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from pathlib import Path
from typing import Any

from ..codegen.kernel.abi import EVENT_CROSSING, TO_AIV, LaunchContext, PipeApi
from .cancel import KernelCancelled
from .cancel import current as current_token
from .pipes import PipeError, PipeSet, lazy_native, symbol_addresses

_SOURCE = Path(__file__).parent / "native" / "pipe_adapter.c"
_vp, _i64 = ctypes.c_void_p, ctypes.c_int64
_SIGNATURES = {
    "plang_adapter_bind": (None, [_vp] * 5),
    "plang_adapter_new": (_vp, []),
    "plang_adapter_delete": (None, [_vp]),
    "plang_adapter_begin": (None, [_vp, _vp]),
    "plang_adapter_end": (_i64, [_vp]),
}
def _bind_adapter(lib: ctypes.CDLL) -> None:
    """Point the adapter at the runtime's ring-buffer functions."""
    rt = symbol_addresses()
    lib.plang_adapter_bind(rt["plang_pipeset_get"], rt["plang_pipe_push"], rt["plang_pipe_pop"],
                           rt["plang_pipe_free"], rt["plang_pipeset_fail"])
    lib.pipe_api = ctypes.pointer(PipeApi.in_dll(lib, "plang_adapter_api"))
    # begin / end run on every launch and never block: call them without releasing
    # the GIL (a release + re-acquire per call lets a woken thread steal the GIL).
    held = ctypes.PyDLL(lib._name)
    for name in ("plang_adapter_begin", "plang_adapter_end"):
        fn = getattr(held, name)
        fn.restype, fn.argtypes = _SIGNATURES[name]
        setattr(lib, name + "_held", fn)


adapter_library = lazy_native(_SOURCE, _SIGNATURES, _bind_adapter)  # built and bound once


def pipe_name(pipe_id: int) -> str:
    """How errors name a kernel pipe id (`abi.pipe_id` = 4 * crossing + 2 * direction + lane)."""
    if pipe_id < 0:
        return "a pipe"
    crossing, rest = divmod(pipe_id, 4)
    direction, lane = divmod(rest, 2)
    to = "to AIV" if direction == TO_AIV else "to AIC"
    if crossing >= EVENT_CROSSING:
        return f"cross-core event {crossing - EVENT_CROSSING} ({to}, AIV lane {lane})"
    return f"pipe {pipe_id} (crossing {crossing}, {to}, AIV lane {lane})"


class _ThreadLaunch:
    """One thread's reusable launch context and adapter state for one kernel."""

    __slots__ = ("state", "ctx", "own_cancel", "begin", "end", "__weakref__")

    def __init__(self, lanes: int) -> None:
        lib = adapter_library()
        self.state = lib.plang_adapter_new()
        if not self.state:
            raise MemoryError("could not allocate a pipe adapter state")
        weakref.finalize(self, lib.plang_adapter_delete, self.state)
        self.ctx = LaunchContext(0, 1, 0, lanes, self.state, lib.pipe_api)
        self.own_cancel = self.ctx.own_cancel_address
        self.begin, self.end = lib.plang_adapter_begin_held, lib.plang_adapter_end_held


class LaunchableKernel:
    """Wraps a compiled kernel so the runtime's scheduler can launch it (see module doc).
    `aiv_lanes` is the core group's AIV count (`Device.aiv_per_cluster`), the kernels'
    ``subblock_num``."""

    def __init__(self, kernel: Any, aiv_lanes: int = 2) -> None:
        if aiv_lanes < 1:
            raise ValueError(f"LaunchableKernel: aiv_lanes must be positive, got {aiv_lanes}")
        self.kernel = kernel
        self.aiv_lanes = aiv_lanes
        self._local = threading.local()  # .launch: this thread's _ThreadLaunch

    @property
    def kernel_name(self) -> str:
        return self.kernel.name

    @property
    def syncall_sites(self) -> tuple:
        """The kernel's `pl.system.syncall` barriers (`abi.SyncSite`)."""
        return getattr(self.kernel, "syncall_sites", ())

    def load(self) -> None:
        """Build the pipe adapter now rather than at the first launch; forward to the kernel."""
        adapter_library()
        load = getattr(self.kernel, "load", None)
        if load is not None:
            load()

    def __call__(self, *args: Any, block_idx: int = 0, block_num: int = 1,
                 pipes: PipeSet | None = None, subblock_idx: int = 0, barrier: Any = None) -> None:
        launch = getattr(self._local, "launch", None)
        if launch is None:
            launch = self._local.launch = _ThreadLaunch(self.aiv_lanes)
        ctx = launch.ctx
        ctx.block_idx, ctx.block_num, ctx.subblock_idx = block_idx, block_num, subblock_idx
        token = current_token()
        ctx.cancel = launch.own_cancel if token is None else token.address
        ctx.barrier = None if barrier is None else barrier.handle
        handle = None
        if pipes is not None:
            pipes.pipe_name = pipe_name
            handle = pipes.handle
        launch.begin(launch.state, handle)
        try:
            self.kernel.launch(args, ctx)
        finally:
            orphan = launch.end(launch.state)
        if orphan >= 0:
            raise PipeError(f"kernel {self.kernel_name} uses {pipe_name(orphan)} but was launched "
                            "outside a Group (no pipe set)")
        if pipes is not None:
            error = pipes.error()
            if error is not None:
                raise PipeError(f"kernel {self.kernel_name}: {error}")
        if token is not None and token.cancelled:
            raise KernelCancelled(f"kernel {self.kernel_name} stopped early: "
                                  f"{token.reason or 'another kernel of its Group failed'}")

    def __repr__(self) -> str:
        return f"<LaunchableKernel {self.kernel!r} aiv_lanes={self.aiv_lanes}>"
