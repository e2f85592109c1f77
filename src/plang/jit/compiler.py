"""Glue from a specialization to a runnable program: parse → passes → kernels → orchestration.

This is the one place that ties the front end, the pass pipeline, kernel codegen and the
runtime together (DESIGN.md "Package layout").
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ir.pipeline import register_compiler
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


def lower_program(program, config, folder: str | None = None):
    """Run the configured pass pipeline for the config's chip (per-pass IR dumps as the config
    asks, under the artefact `folder`, default `artefact_dir`)."""
    from ..passes import PassContext, PassManager

    dump_dir = config.pass_dump_dir(folder or artefact_dir(config, program.name))
    with PassContext(config={"device": config.resolved_device()}):
        manager = PassManager(strategy=config.strategy_name, verify=config.verify, dump_dir=dump_dir)
        return manager.run(program)


def artefact_dir(config, name: str) -> str:
    """The folder a compile of `name` writes its artefacts to: ``save_kernels_dir``, else
    ``$PLANG_PROG_BUILD_DIR`` (default ``build_output``) / ``<name>_<timestamp>``."""
    if config.save_kernels_dir:
        return config.save_kernels_dir
    base = os.environ.get("PLANG_PROG_BUILD_DIR") or "build_output"
    return os.path.join(base, f"{name}_{datetime.now().strftime('%Y%m%d_%H%M%S')}")


def write_artefacts(compiled, folder: str, platform: str) -> None:
    """The orchestration source, every kernel's MLIR and native code, the `kernel_config.py`
    manifest naming them, ``compiled_meta.json`` (`plang.runtime.artefacts`) and the
    ``debug/run.py`` replay script, under `folder`; `compiled` records it."""
    from ..runtime.artefacts import save_program
    from ..runtime.debug import write_run_script

    orchestration = Path(folder, "orchestration")
    orchestration.mkdir(parents=True, exist_ok=True)
    (orchestration / f"{compiled.name}.py").write_text(compiled.source)
    kernels = Path(folder, "kernels")
    kernels.mkdir(exist_ok=True)
    for name, text in compiled.mlir.items():
        (kernels / f"{name}.mlir").write_text(text)
    Path(folder, "kernel_config.py").write_text(kernel_manifest(compiled, platform))
    save_program(compiled, Path(folder), platform)
    write_run_script(folder, compiled.signature, platform=platform)
    compiled.output_dir = folder


def kernel_manifest(compiled, platform: str) -> str:
    """`kernel_config.py`, the reference's build manifest: ``RUNTIME_CONFIG`` (the platform),
    ``ORCHESTRATION`` (its source file and entry) and ``KERNELS`` (per kernel: its id, name,
    MLIR file and the core that runs it), paths relative to the manifest's folder."""
    q = json.dumps
    entries = [f'    {{"func_id": {i}, "name": {q(name)}, "source": str(_ROOT_DIR / "kernels" / '
               f'{q(name + ".mlir")}), "core_type": {q(compiled.core_types[name])}}},'
               for i, name in enumerate(compiled.mlir)]
    return "\n".join([
        f'"""plang build manifest of entry {compiled.name}."""',
        "from pathlib import Path", "", "_ROOT_DIR = Path(__file__).parent", "",
        f'RUNTIME_CONFIG = {{"platform": {q(platform)}}}',
        f'ORCHESTRATION = {{"source": str(_ROOT_DIR / "orchestration" / {q(compiled.name + ".py")}), '
        f'"function_name": {q(compiled.name)}}}',
        "KERNELS = [", *entries, "]", ""])


COUNTERS = {"compiles": 0, "disk_hits": 0}
"""Process-wide counts of full compilations and of programs restored from the disk cache."""
_COUNTING = threading.Lock()


def _count(what: str) -> None:
    with _COUNTING:  # kernels compile on several threads at once
        COUNTERS[what] += 1


def source_key(entry: JITFunction) -> tuple:
    """Identity of the kernel's code: name, file and source hash of the entry and its deps
    (and how a kernel runs: `single_core`)."""
    return tuple((fn.kind, fn.name, fn.source.filename, fn.source.text_hash, fn.single_core)
                 for fn in collect_functions(entry))


def _start_compile_workers() -> None:
    """Start the kernel compile workers now: their start-up overlaps parsing and the passes."""
    from ..codegen.kernel.compile_workers import prestart

    prestart()


def compile_binding(entry: JITFunction, binding: Binding, config, key: tuple):
    """The disk-cached program for `key`, else specialize, lower and generate code."""
    from .build import build_compiled_program, restore_compiled_program

    restored = restore_compiled_program(key) if config.disk_cache else None
    if restored is not None:
        _count("disk_hits")
    else:
        _count("compiles")
        _start_compile_workers()
        spec, program = _specialize_and_parse(entry, binding)
        lowered = lower_program(program, config)
        restored = build_compiled_program(program, lowered, config, entry=entry.name, returns=spec.returns,
                                          key=key if config.disk_cache else None)
    return _with_artefacts(restored, config)


def _with_artefacts(compiled, config, folder: str | None = None):
    """`compiled` for `config`'s platform, its artefacts (into `folder`, default `artefact_dir`)
    written now with ``save_kernels``, else when its `output_dir` is first asked for."""
    compiled.platform = config.platform
    folder = folder or artefact_dir(config, compiled.name)
    compiled.defer_artefacts(lambda: write_artefacts(compiled, folder, config.platform))
    if config.save_kernels:
        compiled.write_artefacts()
    return compiled


def compile_program(program, config=None, entry: str | None = None):
    """Lower a parsed `@pl.program` (or `pl.parse` result) and build its `CompiledProgram`:
    the explicit-compile path for programs written without `@pl.jit` (`pl.compile`).
    `entry` names the Orchestration function to run (default: the only one). With
    ``save_kernels`` (or per-pass dumps) in the config, the artefacts go to `artefact_dir`."""
    from ..ir.enums import FunctionType
    from ..ir.function import Function, Program
    from .build import build_compiled_program
    from .specializer import ReturnPlan

    if isinstance(program, Function):
        program = Program(program.name, [program])
    if not isinstance(program, Program):
        raise TypeError(f"pl.compile takes an ir.Program or ir.Function, got {type(program).__name__}")
    config = run_config(config)
    _start_compile_workers()
    folder = artefact_dir(config, program.name)
    lowered = lower_program(program, config, folder)
    entries = [f.name for f in program.functions.values() if f.func_type is FunctionType.Orchestration]
    if not entry and len(entries) > 1:  # no single entry: each one, by name
        from ..runtime.multi_orchestration import MultiOrchestrationProgram

        return MultiOrchestrationProgram(program.name, {
            name: _with_artefacts(build_compiled_program(program, lowered, config, entry=name,
                                                         returns=ReturnPlan(-1, ()), key=None),
                                  config, os.path.join(folder, "next_levels", name))
            for name in entries}, folder)
    compiled = build_compiled_program(program, lowered, config, entry=entry or "",
                                      returns=ReturnPlan(-1, ()), key=None)
    return _with_artefacts(compiled, config, folder)


def _compile_chip_entry(config, chip, entry: str, rank: int | None):
    """Chip entry `entry` of an L3 program for `config`; on one of several ranks (`rank`), its
    artefacts go to a folder of the rank's own, so ranks compiling at once do not collide."""
    if rank is not None:
        config = dataclasses.replace(config, save_kernels_dir=os.path.join(artefact_dir(config, chip.name),
                                                                           f"rank{rank}"))
    return compile_program(chip, config, entry=entry)


def _reference_compile(program, config=None, *, output_dir=None, strategy="Default", dump_passes=True,
                       backend_type=None, platform=None, distributed_config=None):
    """`plang.ir.compile`: with a `RunConfig`, compile for it; else build one from the
    reference's keywords (artefacts always written, to `output_dir`). A program with a
    HOST-level Orchestrator compiled with `distributed_config` is an L3 program: a
    `DistributedCompiledProgram` whose chip entries compile when first dispatched."""
    from ..distributed.host import DistributedCompiledProgram
    from ..distributed.l3_program import L3Host, host_orchestrator
    from ..ir.function import Program
    from ..runtime import RunConfig
    from .build import _signature

    if config is None:
        config = RunConfig(platform=platform or "cpu", strategy=strategy, dump_passes=dump_passes,
                           save_kernels=True, save_kernels_dir=output_dir,
                           **({} if backend_type is None else {"backend_type": backend_type}))
    if distributed_config is not None and isinstance(program, Program) and host_orchestrator(program):
        host = L3Host(program, functools.partial(_compile_chip_entry, config),
                      _signature(host_orchestrator(program)))
        return DistributedCompiledProgram(host, distributed_config, config)
    return compile_program(program, config)


register_compiler(_reference_compile)


def run_config(config):
    """`config`, or the default RunConfig when it is None (checked to be a RunConfig)."""
    from ..runtime import RunConfig

    if config is None:
        return RunConfig()
    if not isinstance(config, RunConfig):
        raise TypeError(f"config= must be a plang.runtime.RunConfig, got {type(config).__name__}")
    return config
