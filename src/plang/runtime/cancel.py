"""Cooperative cancellation of running kernels: `CancelToken`, the calling thread's current
token, and the `Watchdog` that cancels a task running longer than `RunConfig.kernel_timeout`.

A token is one int64 word native kernels poll through their launch context's ``cancel``
pointer (`plang.codegen.kernel.abi`): at every loop back-edge and before every DDR store, so
a cancelled kernel stops before it writes again and leaves its loops. The scheduler gives the
members of one Group instance one shared token (a failing member cancels the others) and
makes it current on each member's thread (`running`); `LaunchableKernel` points the launch
at the current token. Python kernels and external C kernels that do not poll the word run on.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from ..errors import Error


class KernelCancelled(Error, RuntimeError):
    """A kernel stopped early because its task was cancelled (`reason` says why)."""


class CancelToken:
    """One cancel word; `cancel(reason)` sets it (the first reason is kept) and runs the
    `on_cancel` hook (a Group's pipe-set abort, which wakes members blocked in pipe waits)."""

    __slots__ = ("word", "address", "reason", "on_cancel")

    def __init__(self, on_cancel: Callable[[], None] | None = None) -> None:
        self.word = ctypes.c_int64(0)
        self.address = ctypes.addressof(self.word)
        self.reason: str | None = None
        self.on_cancel = on_cancel

    @property
    def cancelled(self) -> bool:
        return self.word.value != 0

    def cancel(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.word.value = 1
        if self.on_cancel is not None:
            self.on_cancel()


_current = threading.local()


def current() -> CancelToken | None:
    """The token of the task this thread runs (None outside one)."""
    return getattr(_current, "token", None)


@contextmanager
def running(token: CancelToken | None) -> Iterator[None]:
    """Make `token` the calling thread's current token for the block."""
    saved = getattr(_current, "token", None)
    _current.token = token
    try:
        yield
    finally:
        _current.token = saved


class Watchdog:
    """Cancels tokens whose deadline passes, from one daemon thread started on first use."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, CancelToken, str]] = []
        self._live: set[int] = set()
        self._ids = itertools.count()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False

    def watch(self, token: CancelToken, seconds: float, reason: str) -> int:
        """Cancel `token` with `reason` after `seconds` unless `unwatch`ed; returns a handle."""
        handle = next(self._ids)
        with self._cv:
            heapq.heappush(self._heap, (time.monotonic() + seconds, handle, token, reason))
            self._live.add(handle)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True, name="plang-watchdog")
                self._thread.start()
            self._cv.notify()
        return handle

    def unwatch(self, handle: int) -> None:
        with self._cv:
            self._live.discard(handle)

    def _loop(self) -> None:
        with self._cv:
            while not self._closing:
                while self._heap and self._heap[0][1] not in self._live:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cv.wait()
                    continue
                deadline, handle, token, reason = self._heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                heapq.heappop(self._heap)
                self._live.discard(handle)
                token.cancel(reason)

    def close(self) -> None:
        with self._cv:
            self._closing = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
