"""Which run (and trace lane) the calling thread works for: every thread of a Program run (a
Worker, a link, the Runtime sequence, a DMA transfer) binds itself here, so design objects
shared by all runs (fifo handles, kernels) find their per-run state."""

from __future__ import annotations

import threading
from typing import Any

_tls = threading.local()


class RunClosed(BaseException):
    """The run ended while this thread waited (not an error: a while_true core stops)."""


class RunAborted(RunClosed):
    """Another member failed; that member reports the error, this one just stops."""


def bind(run: Any, lane: str) -> None:
    _tls.run, _tls.lane = run, lane


def current_run(what: str) -> Any:
    run = getattr(_tls, "run", None)
    if run is None:
        raise RuntimeError(f"{what} runs inside a Program run (a Worker's core function, a Runtime "
                           "sequence body); call the design instead")
    return run


def port(handle: Any, what: str) -> Any:
    """The calling run's end of `handle`."""
    found = current_run(what).ports.get(id(handle))
    if found is None:
        raise RuntimeError(f"{what}: {handle} is not part of the running design")
    return found


def maybe_run() -> Any:
    return getattr(_tls, "run", None)


def lane() -> str:
    return getattr(_tls, "lane", "host")


#: ``builds``: designs built by `@iron.jit` (each a cache miss)
COUNTERS = {"builds": 0}
