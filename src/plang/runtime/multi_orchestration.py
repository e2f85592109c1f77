"""`MultiOrchestrationProgram`: a program with several Orchestration functions, compiled at once.

Such a program has no single entry, so it is not called: ``compiled[name]`` (or
``compiled.name``) is the `CompiledProgram` that runs Orchestration function `name`, with its
artefacts under ``next_levels/<name>`` of the compile's folder, as in the reference.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from .compiled import CompiledProgram


class MultiOrchestrationProgram:
    """The `CompiledProgram` of each Orchestration function of program `name`, by name."""

    def __init__(self, name: str, entries: Mapping[str, CompiledProgram], folder: str | os.PathLike) -> None:
        self.name = name
        self._entries = dict(entries)
        self.output_dir = Path(folder)

    @property
    def orchestration_names(self) -> list[str]:
        """The names `compiled[name]` accepts, sorted."""
        return sorted(self._entries)

    def __getitem__(self, name: str) -> CompiledProgram:
        if name not in self._entries:
            raise KeyError(f"{self.name} has no orchestration {name!r}; it has {self.orchestration_names}")
        return self._entries[name]

    def __getattr__(self, name: str) -> CompiledProgram:
        entries = self.__dict__.get("_entries", {})
        if name in entries:
            return entries[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.name} has {len(self._entries)} L2 orchestrations {self.orchestration_names}; "
                        f"select one explicitly via compiled['<name>'](...) or compiled.<name>(...)")

    def __fspath__(self) -> str:
        return str(self.output_dir)

    def __repr__(self) -> str:
        return f"<MultiOrchestrationProgram {self.name}: {', '.join(self.orchestration_names)}>"
