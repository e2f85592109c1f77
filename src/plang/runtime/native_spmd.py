"""Native SPMD launches: every block of a plain SPMD kernel task started from C at once.

The scheduler's own path runs an SPMD task's blocks as work items: the dispatching thread
runs block 0 and wakes a core thread for each other block, which then packs its arguments in
Python (holding the GIL the dispatching thread just gave up) before its kernel starts; when
the last block ends, its thread retires the task and wakes the host. On a 2-core VM that is
~125 us between the first and second block's start and ~175 us from the last block's end to
the call's return, on top of a 1.8 ms LayerNorm block (4096x1024 fp32 over two blocks).

Here the dispatching thread packs every block's arguments and launch context first, then
one GIL-free call (``native/spmd_launch.c``) runs the blocks on a pool of native threads
and on itself, at most `Scheduler.workers` at a time, and returns when all have ended. It
applies where the scheduler would otherwise hand blocks to idle cores: every core thread
asleep, nothing else queued, no profiler, no kernel timeout, and a compiled kernel with no
`pl.system.syncall` (pipes and barriers keep their own paths). Failures read as on the
other path: a failed check raises the kernel's error, its siblings stop early
(`KernelCancelled`), a pipe opened outside a Group raises `PipeError`.
``PLANG_NATIVE_SPMD=0`` turns it off.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from pathlib import Path
from typing import Any

from ..codegen.kernel.abi import ArgPacker, LaunchContext
from ..codegen.kernel.kernel import Kernel
from .cancel import KernelCancelled
from .kernel_launch import LaunchableKernel, adapter_library, pipe_name
from .pipes import PipeError, lazy_native

ENV_VAR = "PLANG_NATIVE_SPMD"
_SOURCE = Path(__file__).parent / "native" / "spmd_launch.c"
_vp, _i64 = ctypes.c_void_p, ctypes.c_int64
_SIGNATURES = {
    "plang_spmd_pool_new": (_vp, [_i64]),
    "plang_spmd_pool_threads": (_i64, [_vp]),
    "plang_spmd_run": (None, [_vp, _vp, _vp, _vp, _i64, _i64]),
    "plang_spmd_pool_delete": (None, [_vp]),
}
library = lazy_native(_SOURCE, _SIGNATURES)


def enabled() -> bool:
    return os.environ.get(ENV_VAR, "1").strip() != "0"


def accepts(fn: Any) -> bool:
    """Whether `fn` (a task's callable) is a compiled kernel this path can launch."""
    return (isinstance(fn, LaunchableKernel) and isinstance(fn.kernel, Kernel)
            and not fn.kernel.syncall_sites)


class _Blocks:
    """Reusable launch state for `n` blocks of one kernel: one argument packer (the blocks'
    arguments are the same), a launch context and a pipe-adapter state per block, and the C
    arrays pointing at them."""

    def __init__(self, lk: LaunchableKernel, n: int) -> None:
        adapter = adapter_library()
        self.packer = ArgPacker(lk.kernel.signature)
        self.states = []
        for _ in range(n):
            state = adapter.plang_adapter_new()
            if not state:
                raise MemoryError("could not allocate a pipe adapter state")
            weakref.finalize(self, adapter.plang_adapter_delete, state)
            self.states.append(state)
        self.contexts = [LaunchContext(i, n, 0, lk.aiv_lanes, s, adapter.pipe_api)
                         for i, s in enumerate(self.states)]
        self.block_arrays = self.packer.block_arrays(self.contexts)
        self.arrays = (_vp * n)(*(ctypes.addressof(a) for a in self.block_arrays))
        self.context_array = (_vp * n)(*(ctypes.addressof(c) for c in self.contexts))
        self.entry = ctypes.cast(lk.kernel._native.entry, _vp).value
        self.begin, self.end = adapter.plang_adapter_begin_held, adapter.plang_adapter_end_held


class NativeSpmd:
    """A scheduler's pool of native block threads (`lanes` - 1 of them, started on first
    use) and its launches."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self._pool: int | None = None
        self._local = threading.local()  # .blocks: {kernel: {n: _Blocks}} of this thread

    def run(self, task: Any) -> BaseException | None:
        """Run every block of SPMD `task` (a `Scheduler` task of an `accepts` kernel, its
        `token` set); the task's error, if any (a block's own failure before the
        cancellations it caused)."""
        lib = library()
        if self._pool is None:
            self._pool = lib.plang_spmd_pool_new(self.lanes - 1)
            if not self._pool:
                return MemoryError("could not start the native SPMD threads")
        lk, n, token = task.fn, task.blocks, task.token
        kernels = getattr(self._local, "blocks", None)
        if kernels is None:
            kernels = self._local.blocks = weakref.WeakKeyDictionary()
        per_kernel = kernels.get(lk)
        if per_kernel is None:
            per_kernel = kernels[lk] = {}
        blocks = per_kernel.get(n)
        try:
            if blocks is None:
                blocks = per_kernel[n] = _Blocks(lk, n)
            blocks.packer.fill(task.args)
            for ctx, state in zip(blocks.contexts, blocks.states):
                ctx.cancel, ctx.own_cancel, ctx.status, ctx.barrier = token.address, 0, 0, None
                blocks.begin(state, None)
        except Exception as exc:  # as the other path: the task fails, the process carries on
            return exc
        lib.plang_spmd_run(self._pool, blocks.entry, blocks.arrays, blocks.context_array, n,
                           min(n, self.lanes))
        kernel = lk.kernel
        errors: list[BaseException | None] = []
        for ctx, state in zip(blocks.contexts, blocks.states):
            orphan = blocks.end(state)
            error = None
            if ctx.status:
                status, ctx.status = ctx.status, 0
                error = kernel.status_error(status, ctx)
            elif orphan >= 0:
                error = PipeError(f"kernel {kernel.name} uses {pipe_name(orphan)} but was launched "
                                  "outside a Group (no pipe set)")
            errors.append(error)
        for block, error in enumerate(errors):
            if error is not None:
                token.cancel(f"{task.describe(block)} failed: {type(error).__name__}")
        own = next((e for e in errors if e is not None), None)
        if own is None and token.cancelled:
            own = KernelCancelled(f"kernel {kernel.name} stopped early: {token.reason}")
        return own

    def close(self) -> None:
        if self._pool is not None:
            library().plang_spmd_pool_delete(self._pool)
            self._pool = None
