"""Auxiliary threads for work that must run at the same time as its siblings (the members of
a Group task, the blocks of a ``sync_start`` SPMD task), outside the scheduler's core pool."""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable


class _Job:
    """A callable run on an auxiliary thread; `join()` returns its exception, if any."""

    __slots__ = ("fn", "finished", "error")

    def __init__(self, fn: Callable[[str], None]) -> None:
        self.fn, self.finished, self.error = fn, threading.Event(), None

    def join(self) -> BaseException | None:
        self.finished.wait()
        return self.error


class AuxThreads:
    """Threads for work that must run concurrently with its siblings (Group members,
    ``sync_start`` blocks): a job never waits for a free pool thread, so a Group can not
    deadlock for lack of threads. Threads are reused; new ones start on demand."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[deque] = []
        self._count = 0
        self._all: list[tuple[threading.Thread, deque, threading.Semaphore]] = []

    def start(self, fn: Callable[[str], None]) -> _Job:
        job = _Job(fn)
        with self._lock:
            slot = self._idle.pop() if self._idle else None
            if slot is None:
                inbox: deque = deque()
                sem = threading.Semaphore(0)
                lane = f"aux-{self._count}"
                self._count += 1
                thread = threading.Thread(target=self._loop, args=(lane, inbox, sem), daemon=True,
                                          name=f"plang-{lane}")
                self._all.append((thread, inbox, sem))
                slot = (inbox, sem)
                thread.start()
        inbox, sem = slot
        inbox.append(job)
        sem.release()
        return job

    def _loop(self, lane: str, inbox: deque, sem: threading.Semaphore) -> None:
        while True:
            sem.acquire()
            job = inbox.popleft()
            if job is None:
                return
            try:
                job.fn(lane)
            except BaseException as exc:  # reported through join()
                job.error = exc
            job.finished.set()
            with self._lock:
                self._idle.append((inbox, sem))

    def close(self) -> None:
        with self._lock:
            threads, self._all, self._idle = self._all, [], []
        for thread, inbox, sem in threads:
            inbox.append(None)
            sem.release()
        for thread, _, _ in threads:
            thread.join()
