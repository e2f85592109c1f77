"""Instruments: hooks the `PassManager` calls around every pass.

- `TimingInstrument`: wall time per pass; `table()` renders the per-pass breakdown.
- `DumpIRInstrument(folder)`: writes `00_Input.py`, then `NN_PassName.py` after every pass,
  each the program's DSL text (`Program.as_python()`), which `plang.parse` reads back.
- `VerifyPropertiesInstrument`: after every pass, runs the verifier of every property the
  manager believes holds, so a pass that breaks a property it claims to keep is caught
  where it happens (on in tests, off by default).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..ir.function import Program
from .diagnostics import PassError
from .framework import Pass
from .properties import get_property


class Instrument:
    """Base: every hook is optional."""

    def run_start(self, program: Program) -> None:
        """Called once before the first pass."""

    def before_pass(self, pass_: Pass, program: Program) -> None:
        """Called before `pass_` runs on `program`."""

    def after_pass(self, pass_: Pass, program: Program, held: frozenset[str]) -> None:
        """Called with the pass's result and the properties now believed to hold."""


class TimingInstrument(Instrument):
    """Per-pass wall time (seconds) of the most recent run, in pipeline order."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._start = 0.0

    def run_start(self, program: Program) -> None:
        self.timings = []

    def before_pass(self, pass_: Pass, program: Program) -> None:
        self._start = time.perf_counter()

    def after_pass(self, pass_: Pass, program: Program, held: frozenset[str]) -> None:
        self.timings.append((pass_.name, time.perf_counter() - self._start))

    @property
    def total(self) -> float:
        return sum(t for _, t in self.timings)

    def table(self) -> str:
        """A text table: pass, milliseconds, share of the total."""
        total = self.total or 1.0
        width = max([len(n) for n, _ in self.timings] + [len("total")])
        lines = [f"{'pass':<{width}}  {'ms':>9}  {'%':>6}"]
        lines += [f"{n:<{width}}  {t * 1e3:>9.3f}  {100 * t / total:>5.1f}%" for n, t in self.timings]
        lines.append(f"{'total':<{width}}  {self.total * 1e3:>9.3f}  {100.0:>5.1f}%")
        return "\n".join(lines)


class DumpIRInstrument(Instrument):
    """Write the IR after every pass into `folder` as re-parsable DSL source."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._index = 0

    def run_start(self, program: Program) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._index = 0
        self._write("Input", program)

    def after_pass(self, pass_: Pass, program: Program, held: frozenset[str]) -> None:
        self._write(pass_.name, program)

    def _write(self, label: str, program: Program) -> None:
        path = self.folder / f"{self._index:02d}_{label}.py"
        path.write_text(program.as_python())
        self._index += 1


class VerifyPropertiesInstrument(Instrument):
    """Verify every property believed to hold after each pass."""

    def after_pass(self, pass_: Pass, program: Program, held: frozenset[str]) -> None:
        for name in sorted(held):
            try:
                get_property(name).verify(program)
            except PassError as e:
                raise PassError(f"after pass {pass_.name}, property {name} no longer holds: "
                                f"{e.message}", e.span, pass_.name) from None
