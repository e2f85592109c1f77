"""`pl.system.syncall` at run time: the barrier state of one launch (`LaunchBarrier`) and the
launch checks that keep a barrier from waiting for cores that never come (`participants`).

A barrier spans every participant of one launch: each block of an SPMD task, and in a Group
task each member of each block whose core the barrier's core_type names ("aiv_only",
"aic_only", "mix"). Such a launch runs all its blocks at once, each on its own thread (as
``sync_start`` does), so every participant can reach the barrier; a launch with more blocks
than the device has cores of its kind is refused, as on the chip, where the blocks beyond
them would wait for a core no waiting block frees. The hard form (FFTS on the chip) waits
for every core of its core_type on the device: its launch must fill them exactly and use
``sync_start=True``. The soft form counts arrivals in the user's zero-initialized INT32
``gm_workspace`` (element 0) and releases them in groups of ``used_cores`` (0: the
launch's participants), so it works at any occupancy.

A wait longer than `RunConfig.pipe_timeout` fails the launch with `SyncAllError` at the
barrier's line, saying how many participants arrived. All participants share one
`CancelToken`: a failing participant, the watchdog (`RunConfig.kernel_timeout`) or a
timed-out barrier wakes every waiter (and the pipe waits of the launch's Group instances),
so no block waits for one that already stopped.

C ABI (``native/syncall.c``)::

    void *plang_barrier_create(double timeout_s, int64_t aic, int64_t aiv);
    void plang_barrier_abort(void *barrier);    // every wait returns 2 (aborted)
    void plang_barrier_destroy(void *barrier);
    int plang_syncall(void *barrier, volatile int64_t *cancel, int64_t *record, int64_t site,
                      int64_t kind, volatile int32_t *workspace, int64_t used_cores);
        // the kernels' entry (`plang.codegen.kernel.abi`, *Barriers*); 0 ok, 1 timeout,
        // 2 aborted, 3 no barrier, 4 no participants of its core_type, 5 bad used_cores
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any, Sequence

from ..codegen.kernel.abi import SyncSite
from ..target import Device
from .cancel import CancelToken, running
from .pipes import PipeSet, lazy_native

_SOURCE = Path(__file__).parent / "native" / "syncall.c"
_vp, _i64 = ctypes.c_void_p, ctypes.c_int64
_SIGNATURES = {
    "plang_barrier_create": (_vp, [ctypes.c_double, _i64, _i64]),
    "plang_barrier_abort": (None, [_vp]),
    "plang_barrier_destroy": (None, [_vp]),
}
library = lazy_native(_SOURCE, _SIGNATURES)  # the barrier library, built on first use


def syncall_address() -> int:
    """Address of `plang_syncall`, the function kernels call for `pl.system.syncall`."""
    return ctypes.cast(library().plang_syncall, _vp).value


class LaunchBarrier:
    """The barrier state of one launch with `aic` / `aiv` participants, and the `token` they
    all share (cancelling it aborts the barrier and the pipe sets `joined` to it)."""

    def __init__(self, timeout: float, aic: int, aiv: int) -> None:
        self.handle: int | None = library().plang_barrier_create(timeout, aic, aiv)
        if not self.handle:
            raise MemoryError("could not allocate a barrier")
        self._lock = threading.Lock()
        self._pipes: list[PipeSet] = []
        self.token = CancelToken(on_cancel=self._abort)

    def _abort(self) -> None:
        with self._lock:
            if self.handle:
                library().plang_barrier_abort(self.handle)
            for pipes in self._pipes:
                pipes.abort()

    def run(self, fn: Any, args: Sequence[Any], what: str, block: int, blocks: int) -> None:
        """Block `block` of `blocks`: ``fn(*args, ...)`` under the shared token; a failure
        cancels the other blocks (`what` names the failed one)."""
        try:
            with running(self.token):
                fn(*args, block_idx=block, block_num=blocks, barrier=self)
        except BaseException:
            self.token.cancel(f"{what} failed")
            raise

    def join(self, pipes: PipeSet) -> CancelToken:
        """Abort `pipes` with the barrier (until `leave`); returns the shared token."""
        with self._lock:
            self._pipes.append(pipes)
        if self.token.cancelled:
            pipes.abort()
        return self.token

    def leave(self, pipes: PipeSet) -> None:
        with self._lock:
            self._pipes.remove(pipes)

    def close(self) -> None:
        with self._lock:
            if self.handle:
                library().plang_barrier_destroy(self.handle)
                self.handle = None


def participants(device: Device, members: Sequence[tuple[Any, str, int]], blocks: int | None,
                 sync_start: bool, group: bool) -> tuple[int, int] | None:
    """The (AIC, AIV) participant counts of a launch of `blocks` blocks (None: one) whose
    `members` are (kernel, core "AIC" / "AIV", instances per block), or None when no member
    has a barrier. Raises `SyncAllError` at the barrier when the launch can not complete it
    (see module doc)."""
    sites: list[tuple[Any, SyncSite]] = [(kernel, site) for kernel, _, _ in members
                                         for site in getattr(kernel, "syncall_sites", ())]
    if not sites:
        return None
    n = blocks or 1
    aic = n * sum(count for _, core, count in members if core == "AIC")
    aiv = n * sum(count for _, core, count in members if core == "AIV")
    core = members[0][1]
    capacity, unit = ((device.clusters, "core groups") if group else
                      (device.aic_count, "AIC cores") if core == "AIC" else (device.aiv_count, "AIV cores"))
    for kernel, site in sites:
        name = getattr(kernel, "kernel_name", None) or getattr(kernel, "name", "?")
        if n > capacity:
            raise site.fail(f"kernel {name!r} is launched on {n} blocks, but the device has {capacity} "
                            f"{unit}: the blocks beyond them would wait for a core that no block "
                            "waiting at the barrier frees")
        if site.mode != "hard":
            continue
        if not group and site.core_type != ("aic_only" if core == "AIC" else "aiv_only"):
            raise site.fail(f"kernel {name!r} runs alone on {core} cores, so the other core type never "
                            "reaches this hard barrier")
        if n != capacity or not sync_start:
            raise site.fail(f"the hard barrier waits for all {capacity} {unit} of the device at once: "
                            f"launch kernel {name!r} on exactly {capacity} blocks (got {n}) with "
                            "sync_start=True, or use mode='soft'")
    return aic, aiv
