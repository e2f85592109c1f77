"""`PassManager`: runs a named pipeline of registered passes over a Program.

A pipeline is a list of pass *names* (`PIPELINES`), resolved against the registry when the
manager is built. A name with no registered pass is an error naming it — never skipped.
While the pipeline is being written, run a prefix of it with `stop_after="FlattenCallExpr"`
(names after the stop are not resolved) or pass an explicit list of names / `Pass` objects.

The manager tracks which properties hold: before a pass it verifies any required property
nothing earlier produced (an error names the pass and the property); after it, the held set
loses the pass's `invalidated` and gains its `produced`.

The reference's surface is here too: `PassManager.get_strategy(OptimizationStrategy.Default)`,
`run_passes(program, dump_ir=..., output_dir=...)`, `pass_names` / `get_pass_names()`.

`run()` reads the current `PassContext`: its instruments run after the manager's own, its
disabled passes are skipped, and its verify level adds property verification.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..ir.function import Program
from ..ir.pipeline import OptimizationStrategy, PassDumpLevel, coerce_dump_level
from .context import PassContext, VerifyLevel
from .diagnostics import PassError
from .framework import Pass, get_pass
from .instruments import DumpIRInstrument, Instrument, VerifyPropertiesInstrument
from .properties import get_property

VERIFIERS: tuple[str, ...] = (
    "TypeCheck", "SSAForm", "UseAfterDef", "NoNestedInCore", "AivSplitValid", "InOutUseValid",
    "OrchestrationReferencesResolved", "TileCapacity",
)

PIPELINES: dict[str, tuple[str, ...]] = {
    "Default": (
        "InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "RebindWrittenOperands", "ConvertToSSA",
        "Simplify", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
        "OutlineClusterScopes", "ConvertTensorToTileOps", "InferTileMemorySpace", "LowerAutoVectorSplit",
        "SplitVectorKernel", "ExpandMixedKernel", "SingleLaneEffects", "LowerPipelineLoops",
        "DeriveCallDirections", "MaterializeRuntimeScopes", *VERIFIERS, "FuseTileOps",
    ),
}


class PassManager:
    """Run `strategy` (a pipeline name, an `OptimizationStrategy`, or a sequence of pass names /
    `Pass` objects).

    `verify=True` re-verifies every held property after each pass; `dump_dir` writes the IR
    after every pass; `instruments` adds more hooks (e.g. a `TimingInstrument`).
    """

    def __init__(self, strategy: str | OptimizationStrategy | Sequence[str | Pass] = "Default",
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

    @classmethod
    def get_strategy(cls, strategy: str | OptimizationStrategy = OptimizationStrategy.Default,
                     **options: object) -> PassManager:
        """A manager for a named pipeline (the reference's constructor; its keyword options,
        such as ``analyze_auto_scopes_for_deps``, do not change plang's pipeline)."""
        return cls(strategy)

    @property
    def pass_names(self) -> list[str]:
        return [p.name for p in self.passes]

    def get_pass_names(self) -> list[str]:
        return self.pass_names

    def run_passes(self, input_ir: Program, dump_ir: bool | PassDumpLevel = False,
                   output_dir: str | None = None, prefix: str = "pl") -> Program:
        """`run`, dumping the IR after each pass into `output_dir` when `dump_ir` asks
        (`prefix` is the module alias of the printed IR; plang always prints ``pl``)."""
        if coerce_dump_level(dump_ir) is PassDumpLevel.NONE:
            return self.run(input_ir)
        if output_dir is None:
            raise ValueError("output_dir is required when dumping IR")
        self.instruments.append(DumpIRInstrument(output_dir))
        try:
            return self.run(input_ir)
        finally:
            self.instruments.pop()

    @staticmethod
    def _pipeline(strategy: str | OptimizationStrategy | Sequence[str | Pass]) -> list[str | Pass]:
        if isinstance(strategy, OptimizationStrategy):
            strategy = strategy.value
        if isinstance(strategy, str):
            try:
                return list(PIPELINES[strategy])
            except KeyError:
                raise ValueError(f"unknown pass pipeline {strategy!r}; known: {', '.join(PIPELINES)}") \
                    from None
        return list(strategy)

    def run(self, program: Program) -> Program:
        """The program after every pass of the pipeline (the disabled ones skipped)."""
        ctx = PassContext.current()
        disabled = {get_pass(n).name for n in ctx.disabled_passes}
        instruments = ctx.instruments_with(self.instruments)
        held: frozenset[str] = frozenset()
        skipped: dict[str, str] = {}  # property -> the disabled pass that would produce it
        for inst in instruments:
            inst.run_start(program)
        for p in self.passes:
            if p.name in disabled:
                skipped.update({prop: p.name for prop in p.produced - held})
                continue
            held |= self._check_disabled_producers(p, program, held, skipped)
            p.check_required(program, held)
            held |= p.required
            for inst in instruments:
                inst.before_pass(p, program)
            program = p.run(program)
            held = (held - p.invalidated) | p.produced
            for inst in instruments:
                inst.after_pass(p, program, held)
        if ctx.verify_level >= VerifyLevel.ALL:
            ran = {p.name for p in self.passes} - disabled
            for name in VERIFIERS:
                if name not in ran:
                    get_property(name).verify(program)
        return program

    @staticmethod
    def _check_disabled_producers(p: Pass, program: Program, held: frozenset[str],
                                  skipped: dict[str, str]) -> frozenset[str]:
        """Verify the properties `p` requires that only a disabled pass would have produced."""
        props = frozenset(prop for prop in p.required - held if prop in skipped)
        for prop in sorted(props):
            try:
                get_property(prop).verify(program)
            except PassError as e:
                raise PassError(f"pass {p.name} requires property {prop}, which the IR lacks; pass "
                                f"{skipped[prop]}, which produces it, is disabled by the PassContext: "
                                f"{e.message}", e.span, p.name) from None
        return props
