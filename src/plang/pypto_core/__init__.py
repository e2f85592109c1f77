"""The reference's native-extension module path (``pypto.pypto_core``) under plang's name: the
few names its programs and test harnesses import from there. plang has no native core; these
are plain Python stand-ins (`ir.CoreType`, `LogLevel` and the log-level setters govern plang's own
``logging`` logger; `passes.MemoryPlanner` is accepted and has no effect on the simulated
chip)."""

from . import ir, passes
from .logging import LogLevel, _clear_thread_log_level, _set_thread_log_level, get_log_level, set_log_level

__all__ = ["LogLevel", "_clear_thread_log_level", "_set_thread_log_level", "get_log_level", "ir", "passes",
           "set_log_level"]
