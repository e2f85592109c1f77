"""The reference's compile-pipeline options under plang's names (`OptimizationStrategy`,
`PassDumpLevel`) and `plang.ir.compile`.

`compile` lives here because reference programs call ``ir.compile``; the compiler itself sits
above the IR (passes, codegen, runtime), so `plang.jit` registers it when plang is imported.
"""

from __future__ import annotations

from enum import Enum, unique
from typing import Any, Callable


@unique
class OptimizationStrategy(Enum):
    """A pass pipeline by name; the value is the name of a `plang.passes.PIPELINES` entry."""

    Default = "Default"


class PassDumpLevel(Enum):
    """How much a per-pass IR dump shows. plang prints the same IR for CONCISE and EXPLICIT
    (its printed IR already spells out every tile's memory space and layout)."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


def coerce_dump_level(dump_passes: bool | PassDumpLevel) -> PassDumpLevel:
    """A `dump_passes` value as a level: True -> CONCISE, False -> NONE."""
    if isinstance(dump_passes, PassDumpLevel):
        return dump_passes
    if isinstance(dump_passes, bool):
        return PassDumpLevel.CONCISE if dump_passes else PassDumpLevel.NONE
    raise TypeError(f"dump_passes must be a bool or a PassDumpLevel, got {type(dump_passes).__name__}")


#: options of the reference's ``ir.compile`` that have no meaning for plang's CPU backend
#: (ptoas, memory planners, diagnostics gates, runtime ABI): accepted and ignored
REFERENCE_ONLY_COMPILE_OPTIONS = frozenset({
    "skip_ptoas", "verification_level", "diagnostic_phase", "disabled_diagnostics", "memory_planner",
    "enable_pypto_l0c_double_buffer", "profiling", "distributed_config", "analyze_auto_scopes_for_deps",
    "emit_source_loc", "dump_ptoas_passes", "runtime",
})

_COMPILER: list[Callable[..., Any]] = []


def register_compiler(fn: Callable[..., Any]) -> None:
    """Called by `plang.jit` at import: ``fn(program, config, **reference_keywords)``, the
    compiler `compile` and `compile_for` forward to."""
    _COMPILER[:] = [fn]


def _compiler() -> Callable[..., Any]:
    if not _COMPILER:
        raise RuntimeError("plang.ir.compile needs the plang package; import plang first")
    return _COMPILER[0]


def compile(program: Any, output_dir: str | None = None,  # noqa: A001  (the reference's name)
            strategy: OptimizationStrategy | str = OptimizationStrategy.Default,
            dump_passes: bool | PassDumpLevel = True, backend_type: Any = None,
            platform: str | None = None, **options: Any) -> Any:
    """Lower and build `program` (a `@pl.program`, `ir.Program` or `ir.Function`) into a
    `plang.runtime.CompiledProgram` whose artefacts (per-pass IR dumps, the orchestration
    source, each kernel's MLIR) are written under `output_dir` (default
    ``build_output/<name>_<timestamp>``); the result is path-like (``os.fspath`` gives that
    folder) and callable with torch tensors. `platform` defaults to ``"cpu"``; the reference's
    other keywords are accepted (see `REFERENCE_ONLY_COMPILE_OPTIONS`), any other is a TypeError."""
    unknown = sorted(set(options) - REFERENCE_ONLY_COMPILE_OPTIONS)
    if unknown:
        raise TypeError(f"compile() got an unexpected keyword argument {unknown[0]!r}")
    if options.get("memory_planner") is not None:
        from ..pypto_core.passes import MemoryPlanner  # (pypto_core builds on ir)
        from ..pypto_core.ptoas_limits import refuse_colive_slots

        if options["memory_planner"] is MemoryPlanner.PTOAS:
            refuse_colive_slots(program)
    return _compiler()(program, None, output_dir=output_dir, strategy=strategy, dump_passes=dump_passes,
                       backend_type=backend_type, platform=platform,
                       distributed_config=options.get("distributed_config"))


def compile_for(program: Any, config: Any, distributed_config: Any = None) -> Any:
    """`program` compiled for a `plang.runtime.RunConfig` (artefacts as its save_kernels /
    dump_passes ask); with `distributed_config`, an L3 program's `DistributedCompiledProgram`."""
    return _compiler()(program, config, distributed_config=distributed_config)


__all__ = ["OptimizationStrategy", "PassDumpLevel", "coerce_dump_level", "compile", "compile_for",
           "register_compiler"]
