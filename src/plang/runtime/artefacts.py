"""A compiled program's build folder, and loading a program back from one.

Besides the readable artefacts (``orchestration/<entry>.py``, ``kernels/<kernel>.mlir``, the
``kernel_config.py`` manifest, written by `plang.jit`), a build folder holds each kernel's
native code (``kernels/<kernel>.so`` and its ``.so.json`` sidecar, `Kernel.save`) and
``compiled_meta.json``: the entry, its signature, how results map to Out tensors, the AIV lane
count and the platform. `load_program` (``CompiledProgram.from_dir``) rebuilds a runnable
program from these alone: no parse, no passes, no kernel compilation. It runs the folder's
orchestration source and loads its libraries, so load only folders you built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..codegen.kernel import load_kernel
from ..dtypes import DataType
from ..ir.enums import ParamDirection
from .kernel_launch import LaunchableKernel
from .param_spec import ParamSpec

if TYPE_CHECKING:
    from .compiled import CompiledProgram

META_FILE = "compiled_meta.json"
SCHEMA = 1


def program_meta(compiled: CompiledProgram, aiv_lanes: int) -> dict[str, Any]:
    """What restoring `compiled` needs besides its orchestration source and kernel files."""
    return {
        "entry": compiled.name,
        "kernels": list(compiled.kernels),
        "aiv_lanes": aiv_lanes,
        "core_types": compiled.core_types,
        "result_arity": compiled.result_arity,
        "writebacks": [[i, compiled.signature[p].name] for i, p in compiled.writebacks],
        "signature": [[p.name, p.dtype.name, None if p.shape is None else list(p.shape), p.direction.value]
                      for p in compiled.signature],
    }


def program_from_meta(cls: type[CompiledProgram], meta: dict[str, Any], orchestration: str,
                      kernel_file: Callable[[str], Path]) -> CompiledProgram:
    """The `CompiledProgram` `meta` describes: `orchestration` executed, each kernel loaded
    from `kernel_file(name)` (its `program` and `lowered` IR are None)."""
    namespace: dict[str, Any] = {}
    exec(compile(orchestration, f"<orchestration {meta['entry']}>", "exec"), namespace)
    kernels = {name: LaunchableKernel(load_kernel(str(kernel_file(name))), meta["aiv_lanes"])
               for name in meta["kernels"]}
    signature = [ParamSpec(n, DataType.from_name(d), None if s is None else tuple(s), ParamDirection(way))
                 for n, d, s, way in meta["signature"]]
    compiled = cls(meta["entry"], signature, namespace[meta["entry"]], kernels, orchestration)
    compiled.lowered = None
    compiled.core_types = dict(meta["core_types"])
    compiled.mlir = {name: k.kernel.mlir_text for name, k in kernels.items()}
    index = {p.name: i for i, p in enumerate(signature)}
    compiled.result_arity = meta["result_arity"]
    compiled.writebacks = tuple((pos, index[name]) for pos, name in meta["writebacks"] if name in index)
    return compiled


def save_program(compiled: CompiledProgram, folder: Path, platform: str) -> None:
    """Each kernel's native code under ``kernels/`` and ``compiled_meta.json`` in `folder`."""
    kernels = folder / "kernels"
    kernels.mkdir(parents=True, exist_ok=True)
    lanes = 2
    for name, launchable in compiled.kernels.items():
        launchable.kernel.save(str(kernels / f"{name}.so"))
        lanes = launchable.aiv_lanes
    meta = {"schema": SCHEMA, "platform": platform, "orchestration": f"orchestration/{compiled.name}.py",
            **program_meta(compiled, lanes)}
    (folder / META_FILE).write_text(json.dumps(meta, indent=1))


def load_program(cls: type[CompiledProgram], folder: str | Path,
                 platform: str | None = None) -> CompiledProgram:
    """The program a build folder holds (see the module doc); `platform` overrides the saved
    one (the chip its calls default to)."""
    folder = Path(folder).resolve()
    path = folder / META_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not a plang build folder (compile with "
                                "plang.ir.compile(program, output_dir=...) to write one)")
    try:
        meta = json.loads(path.read_text())
        if meta.get("schema") != SCHEMA:
            raise ValueError(f"schema {meta.get('schema')!r}, expected {SCHEMA}")
        orchestration = (folder / meta["orchestration"]).read_text()
        compiled = program_from_meta(cls, meta, orchestration, lambda name: folder / "kernels" / f"{name}.so")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: unreadable build metadata: {e}") from None
    compiled.platform = platform or meta["platform"]
    compiled.output_dir = folder
    return compiled
