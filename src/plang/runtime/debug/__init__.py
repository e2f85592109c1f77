"""Debug replay of a build folder: the ``debug/run.py`` script a compile writes, and what it runs."""

from .replay import replay
from .run_script_writer import write_run_script

__all__ = ["replay", "write_run_script"]
