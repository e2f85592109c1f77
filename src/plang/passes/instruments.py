"""Instruments: hooks the `PassManager` calls around every pass.

- `TimingInstrument`: wall time per pass; `table()` renders the per-pass breakdown.
- `DumpIRInstrument(folder)`: writes `00_Input.py`, then `NN_PassName.py` after every pass,
  each the program's DSL text (`Program.as_python()`), which `plang.parse` reads back.
- `VerifyPropertiesInstrument`: after every pass, runs the verifier of every property the
  manager believes holds, so a pass that breaks a property it claims to keep is caught
  where it happens (on in tests, off by default).
- `RoundTripInstrument(pl.parse)`: after every pass, prints the program, parses it back and
  checks the result is structurally equal and prints identically (the printer contract);
  the test suite runs it on every pass (tests/conftest.py).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..ir.equality import assert_structural_equal
from ..ir.function import Program
from .diagnostics import PassError
from .properties import get_property

if TYPE_CHECKING:
    from .framework import Pass


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


class RoundTripInstrument(Instrument):
    """After every pass: `parse(program.as_python())` must be structurally equal to the
    pass's output and print to the same text, else a `PassError` names the pass and the
    first difference.

    `parse` is the front end's `pl.parse` (passes never import the front end). A program
    object this thread checked last (a pass that changed nothing) is not checked again, so
    one instrument can serve any number of threads and runs.
    """

    def __init__(self, parse: Callable[..., object]) -> None:
        self.parse = parse
        self._last = threading.local()

    def after_pass(self, pass_: Pass, program: Program, held: frozenset[str]) -> None:
        functions = tuple(program.functions.values())
        if getattr(self._last, "functions", None) == functions:
            return
        self.check(program, pass_.name)
        self._last.functions = functions

    def check(self, program: Program, pass_name: str) -> None:
        """Raise `PassError` (attributed to `pass_name`) unless `program` round-trips."""
        where = f"after pass {pass_name}"
        text = program.as_python()
        try:
            parsed = self.parse(text, f"<round trip {where}>")
        except Exception as e:
            raise PassError(f"{where}, the printed IR does not parse back: {e}\n{_numbered(text)}",
                            pass_name=pass_name) from e
        try:
            assert_structural_equal(parsed, program)
        except AssertionError as e:
            raise PassError(f"{where}, the re-parsed IR differs from the pass's output at {e}\n"
                            f"{_numbered(text)}", pass_name=pass_name) from None
        again = parsed.as_python()
        if again != text:
            line = next(i for i, (a, b) in enumerate(zip(text.splitlines() + [""], again.splitlines() + [""]))
                        if a != b)
            raise PassError(f"{where}, printing is not a fixpoint: line {line + 1} prints as "
                            f"{text.splitlines()[line:line + 1]} then {again.splitlines()[line:line + 1]}",
                            pass_name=pass_name)


def _numbered(text: str) -> str:
    return "\n".join(f"{i:4} | {line}" for i, line in enumerate(text.splitlines(), 1))
