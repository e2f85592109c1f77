"""The reference's logging framework (also `plang.LogLevel`, `plang.log_info`, ...).

A process-wide threshold, `set_log_level` / `get_log_level` (INFO unless ``$PLANG_LOG_LEVEL``
names another: debug, info, warn, error, fatal, event or none, in any case), which a thread
may override with `_set_thread_log_level` until `_clear_thread_log_level`; `get_log_level`
reads the process-wide one, so a get / set pair saves and restores it under any override.
`log_debug` ... `log_event` write ``YYYY-MM-DD HH:MM:SS.mmm L | message`` to stderr when
their level is at or above the calling thread's threshold (L is one of ``DIWEFV``).
`check` raises ValueError and `internal_check` / `internal_check_span` raise `InternalError`,
with the message, the span when there is one, and where the check was called from."""

from __future__ import annotations

import os
import sys
import threading
import time
from enum import IntEnum
from typing import Callable

from ..errors import InternalError
from ..ir.span import Span

__all__ = ["LogLevel", "check", "get_log_level", "internal_check", "internal_check_span", "log_debug",
           "log_error", "log_event", "log_fatal", "log_info", "log_warn", "set_log_level"]


class LogLevel(IntEnum):
    """The reference's log levels, in its order (a message shows at or above the threshold)."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6

    def __str__(self) -> str:
        return f"LogLevel.{self.name}"


ENV_VAR = "PLANG_LOG_LEVEL"
_thread = threading.local()
_write_lock = threading.Lock()


def _default_level() -> LogLevel:
    name = os.environ.get(ENV_VAR, "").strip().upper()
    return LogLevel[name] if name in LogLevel.__members__ else LogLevel.INFO


_global = [_default_level()]


def set_log_level(level: LogLevel) -> None:
    """Set the process-wide threshold."""
    _global[0] = LogLevel(level)


def get_log_level() -> LogLevel:
    """The process-wide threshold (a thread's override aside)."""
    return _global[0]


def _set_thread_log_level(level: LogLevel) -> None:
    """Override the threshold for the calling thread."""
    _thread.level = LogLevel(level)


def _clear_thread_log_level() -> None:
    """Drop the calling thread's override, back to the process-wide threshold."""
    _thread.level = None


def _log(level: LogLevel, message: str) -> None:
    threshold = getattr(_thread, "level", None)
    if level < (_global[0] if threshold is None else threshold):
        return
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    line = f"{stamp}.{int(now * 1000) % 1000:03d} {'DIWEFV'[level]} | {message}\n"
    with _write_lock:
        sys.stderr.write(line)
        sys.stderr.flush()


def _logger(level: LogLevel) -> Callable[[str], None]:
    def log(message: str) -> None:
        _log(level, message)

    log.__name__ = log.__qualname__ = f"log_{level.name.lower()}"
    log.__doc__ = f"Log `message` at {level.name}."
    return log


log_debug, log_info, log_warn, log_error, log_fatal, log_event = map(_logger, list(LogLevel)[:-1])


def _failed(kind: type[Exception], message: str, span: Span | None = None) -> Exception:
    """`kind` with `message`, ` [file:line:col]` of a known span, and the caller's location."""
    caller = sys._getframe(2)
    where = f" [{span!r}]" if span is not None and span.is_known else ""
    return kind(f"{message}{where}\nCheck failed: condition at "
                f"{caller.f_code.co_filename}:{caller.f_lineno}")


def check(condition: bool, message: str) -> None:
    """Raise ValueError(message) unless `condition` holds: a user-facing check."""
    if not condition:
        raise _failed(ValueError, message)


def internal_check(condition: bool, message: str) -> None:
    """Raise `InternalError(message)` unless `condition` holds: a broken invariant."""
    if not condition:
        raise _failed(InternalError, message)


def internal_check_span(condition: bool, message: str, span: Span) -> None:
    """`internal_check` whose message names the IR source location `span`."""
    if not condition:
        raise _failed(InternalError, message, span)
