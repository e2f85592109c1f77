"""`LogLevel` and the reference's log-level setters, mapped onto Python's ``logging`` for the
``plang`` logger (the reference sets the threshold of its C++ logger)."""

from __future__ import annotations

import logging
import threading
from enum import IntEnum


class LogLevel(IntEnum):
    """The reference's log levels, in its order."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


_TO_LOGGING = {LogLevel.DEBUG: logging.DEBUG, LogLevel.INFO: logging.INFO, LogLevel.WARN: logging.WARNING,
               LogLevel.ERROR: logging.ERROR, LogLevel.FATAL: logging.CRITICAL,
               LogLevel.EVENT: logging.INFO, LogLevel.NONE: logging.CRITICAL + 10}
_LOGGER = logging.getLogger("plang")
_thread = threading.local()
_global = [LogLevel.WARN]


def set_log_level(level: LogLevel) -> None:
    """Set the threshold of the ``plang`` logger."""
    level = LogLevel(level)
    _global[0] = level
    _LOGGER.setLevel(_TO_LOGGING[level])


def get_log_level() -> LogLevel:
    """The level in effect for this thread (its override, else the global one)."""
    level = getattr(_thread, "level", None)
    return _global[0] if level is None else level


def _set_thread_log_level(level: LogLevel) -> None:
    """Override the level for the calling thread (the reference's per-thread override; in
    plang it also sets the ``plang`` logger's threshold until cleared)."""
    _thread.level = LogLevel(level)
    _LOGGER.setLevel(_TO_LOGGING[_thread.level])


def _clear_thread_log_level() -> None:
    """Drop the calling thread's override, back to the global level."""
    _thread.level = None
    _LOGGER.setLevel(_TO_LOGGING[_global[0]])
