"""The reference's native-extension module path (``pypto.pypto_core``) under plang's name: the
few names its programs and test harnesses import from there. plang has no native core; these
are plain Python stand-ins (`LogLevel` and the log-level setters govern plang's own
``logging`` logger; `passes.MemoryPlanner` is accepted and has no effect on the simulated
chip)."""

from . import passes
from .logging import LogLevel, _clear_thread_log_level, _set_thread_log_level, get_log_level, set_log_level

__all__ = ["LogLevel", "_clear_thread_log_level", "_set_thread_log_level", "get_log_level", "passes",
           "set_log_level"]
