"""`PassManager`: runs a named pipeline of registered passes over a Program.

A pipeline is a list of pass *names* (`PIPELINES`), resolved against the registry when the
manager is built. A name with no registered pass is an error naming it — never skipped.
While the pipeline is being written, run a prefix of it with `stop_after="FlattenCallExpr"`
(names after the stop are not resolved) or pass an explicit list of names / `Pass` objects.

The manager tracks which properties hold: before a pass it verifies any required property
nothing earlier produced (an error names the pass and the property); after it, the held set
loses the pass's `invalidated` and gains its `produced`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..ir.function import Program
from .framework import Pass, get_pass
from .instruments import DumpIRInstrument, Instrument, VerifyPropertiesInstrument
from .properties import get_property

VERIFIERS: tuple[str, ...] = (
    "TypeCheck", "SSAForm", "UseAfterDef", "NoNestedInCore", "AivSplitValid", "InOutUseValid",
    "OrchestrationReferencesResolved", "TileCapacity",
)

PIPELINES: dict[str, tuple[str, ...]] = {
    "Default": (
        "InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
        "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes", "OutlineClusterScopes",
        "ConvertTensorToTileOps", "InferTileMemorySpace", "LowerAutoVectorSplit",
        "ExpandMixedKernel", "LowerPipelineLoops", "DeriveCallDirections",
        "MaterializeRuntimeScopes", *VERIFIERS,
    ),
}


class PassManager:
    """Run `strategy` (a pipeline name or a sequence of pass names / `Pass` objects).

    `verify=True` re-verifies every held property after each pass; `dump_dir` writes the IR
    after every pass; `instruments` adds more hooks (e.g. a `TimingInstrument`).
    """

    def __init__(self, strategy: str | Sequence[str | Pass] = "Default",
                 instruments: Sequence[Instrument] = (), verify: bool = False,
                 dump_dir: str | Path | None = None, stop_after: str | None = None) -> None:
        names = self._pipeline(strategy)
        if stop_after is not None:
            labels = [n if isinstance(n, str) else n.name for n in names]
            if stop_after not in labels:
                raise ValueError(f"stop_after={stop_after!r} is not in the pipeline ({', '.join(labels)})")
            names = names[:labels.index(stop_after) + 1]
        self.passes: list[Pass] = [get_pass(n)() if isinstance(n, str) else n for n in names]
        for p in self.passes:
            for prop in p.required | p.produced | p.invalidated:
                get_property(prop)
        self.instruments: list[Instrument] = list(instruments)
        if dump_dir is not None:
            self.instruments.append(DumpIRInstrument(dump_dir))
        if verify:
            self.instruments.append(VerifyPropertiesInstrument())

    @staticmethod
    def _pipeline(strategy: str | Sequence[str | Pass]) -> list[str | Pass]:
        if isinstance(strategy, str):
            try:
                return list(PIPELINES[strategy])
            except KeyError:
                raise ValueError(f"unknown pass pipeline {strategy!r}; known: {', '.join(PIPELINES)}") \
                    from None
        return list(strategy)

    def run(self, program: Program) -> Program:
        """The program after every pass of the pipeline."""
        held: frozenset[str] = frozenset()
        for inst in self.instruments:
            inst.run_start(program)
        for p in self.passes:
            p.check_required(program, held)
            held |= p.required
            for inst in self.instruments:
                inst.before_pass(p, program)
            program = p.run(program)
            held = (held - p.invalidated) | p.produced
            for inst in self.instruments:
                inst.after_pass(p, program, held)
        return program
