"""The reference's native-extension module path (``pypto.pypto_core``) under plang's name: the
few names its programs and test harnesses import from there. plang has no native core; these
are plain Python stand-ins (`ir.CoreType`; `LogLevel`, the log-level setters and the log and
check functions of `logging`; `passes.MemoryPlanner` is accepted and has no effect on the
simulated chip)."""

from ..errors import Error, InternalError
from . import ir, logging, passes
from .logging import *  # noqa: F403
from .logging import _clear_thread_log_level, _set_thread_log_level

__all__ = ["Error", "InternalError", "_clear_thread_log_level", "_set_thread_log_level", "ir", "passes",
           *logging.__all__]
