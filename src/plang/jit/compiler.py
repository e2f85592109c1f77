"""Glue from a specialization to a runnable program: parse → passes → kernels → orchestration.

This is the one place that ties the front end, the pass pipeline, kernel codegen and the
runtime together (DESIGN.md "Package layout").
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..language import parse
from .binding import Binding
from .source import python_literal
from .specializer import collect_functions, specialize_source

if TYPE_CHECKING:
    from .function import JITFunction


def live_value(fn: JITFunction, name: str) -> Any:
    """The current value of a global / closure name of `fn`."""
    return fn.source.namespace.get(name)


def constant_names(entry: JITFunction) -> list[tuple[JITFunction, str]]:
    """(function, name) of every closure/global name the kernel's bodies read (other than
    its `@pl.jit.*` functions): their current values are part of the specialization."""
    deps = collect_functions(entry)
    dep_names = {d.name for d in deps}
    return [(fn, name) for fn in deps for name in fn.source.free_names if name not in dep_names]


def constants_key(entry: JITFunction) -> tuple:
    return tuple((fn.name, name, python_literal(live_value(fn, name)))
                 for fn, name in constant_names(entry))


def parse_specialized(entry: JITFunction, binding: Binding):
    """The specialized `@pl.program` source, parsed (diagnostics point at the user's file)."""
    return _specialize_and_parse(entry, binding)[1]


def _specialize_and_parse(entry: JITFunction, binding: Binding):
    spec = specialize_source(entry, binding)
    return spec, parse(spec.source, filename=f"<specialized {entry.name}>",
                             source_map=spec.source_map)


def lower_program(program, config):
    """Run the configured pass pipeline."""
    from ..passes import PassManager

    return PassManager(strategy=config.strategy, verify=config.verify,
                       dump_dir=config.dump_passes).run(program)


COUNTERS = {"compiles": 0, "disk_hits": 0}
"""Process-wide counts of full compilations and of programs restored from the disk cache."""
_COUNTING = threading.Lock()


def _count(what: str) -> None:
    with _COUNTING:  # kernels compile on several threads at once
        COUNTERS[what] += 1


def source_key(entry: JITFunction) -> tuple:
    """Identity of the kernel's code: name, file and source hash of the entry and its deps."""
    return tuple((fn.kind, fn.name, fn.source.filename, fn.source.text_hash)
                 for fn in collect_functions(entry))


def _start_compile_workers() -> None:
    """Start the kernel compile workers now: their start-up overlaps parsing and the passes."""
    from ..codegen.kernel.compile_workers import prestart

    prestart()


def compile_binding(entry: JITFunction, binding: Binding, config, key: tuple):
    """The disk-cached program for `key`, else specialize, lower and generate code."""
    from .build import build_compiled_program, restore_compiled_program

    if config.disk_cache:
        restored = restore_compiled_program(key)
        if restored is not None:
            _count("disk_hits")
            return restored
    _count("compiles")
    _start_compile_workers()
    spec, program = _specialize_and_parse(entry, binding)
    lowered = lower_program(program, config)
    return build_compiled_program(program, lowered, config, entry=entry.name, returns=spec.returns,
                                  key=key if config.disk_cache else None)


def compile_program(program, config=None, entry: str | None = None):
    """Lower a parsed `@pl.program` (or `pl.parse` result) and build its `CompiledProgram`:
    the explicit-compile path for programs written without `@pl.jit` (`pl.compile`).
    `entry` names the Orchestration function to run (default: the only one)."""
    from ..ir.function import Function, Program
    from .build import build_compiled_program
    from .specializer import ReturnPlan

    if isinstance(program, Function):
        program = Program(program.name, [program])
    if not isinstance(program, Program):
        raise TypeError(f"pl.compile takes an ir.Program or ir.Function, got {type(program).__name__}")
    config = run_config(config)
    _start_compile_workers()
    lowered = lower_program(program, config)
    return build_compiled_program(program, lowered, config, entry=entry or "", returns=ReturnPlan(-1, ()),
                                  key=None)


def run_config(config):
    """`config`, or the default RunConfig when it is None (checked to be a RunConfig)."""
    from ..runtime import RunConfig

    if config is None:
        return RunConfig()
    if not isinstance(config, RunConfig):
        raise TypeError(f"config= must be a plang.runtime.RunConfig, got {type(config).__name__}")
    return config
