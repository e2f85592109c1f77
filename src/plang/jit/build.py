"""Code generation for a lowered program: native kernels + the orchestration task program,
packaged as a runtime `CompiledProgram` (and restored from / saved to the disk cache)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..ir.enums import FunctionType
from ..ir.expr import ConstInt, Mul, Var
from ..ir.function import Function, Program
from ..ir.types import ScalarType, TensorType, dim_value
from .output_rebinding import check_writebacks
from .specializer import ReturnPlan


def _signature(fn: Function):
    from ..runtime.compiled import ParamSpec

    specs = []
    for param, direction in zip(fn.params, fn.param_directions):
        t = param.type
        if isinstance(t, TensorType):
            shape = tuple(_dim_spec(d) for d in t.shape)
            specs.append(ParamSpec(param.name, t.dtype, shape, direction))
        elif isinstance(t, ScalarType):
            specs.append(ParamSpec(param.name, t.dtype, None, direction))
        else:
            raise TypeError(f"entry {fn.name}: parameter {param.name!r} of type {t} can not be passed "
                            f"from Python")
    return specs


def _dim_spec(d) -> int | str:
    """A signature dim: its value, a dynamic dim's name, or ``"name*k"`` for a multiple of one
    (`pl.Tensor[[M * 2, N], ...]`: the tensor's extent gives M = extent / 2)."""
    if dim_value(d) is not None:
        return dim_value(d)
    if isinstance(d, Mul):
        (var, k) = (d.lhs, d.rhs) if isinstance(d.rhs, ConstInt) else (d.rhs, d.lhs)
        if isinstance(var, Var) and isinstance(k, ConstInt) and k.value > 0:
            return f"{var.name}*{k.value}"
    return getattr(d, "name", None) or str(d)


def _entry_name(lowered: Program, entry: str) -> str:
    if entry in lowered.functions:
        return entry
    host = [f.name for f in lowered.functions.values() if f.func_type is FunctionType.Orchestration]
    if len(host) == 1 and not entry:
        return host[0]
    wanted = f"an orchestration entry named {entry!r}" if entry else "exactly one Orchestration function"
    raise TypeError(f"program {lowered.name!r} needs {wanted} to run; it has "
                    f"{', '.join(host) or 'none'}")


def build_compiled_program(program: Program | None, lowered: Program, config, entry: str,
                           returns: ReturnPlan, key: tuple | None):
    """Compile every core function and the orchestration of `lowered`."""
    from ..codegen.kernel import compile_kernel
    from ..codegen.orchestration import generate_orchestration
    from ..runtime.compiled import CompiledProgram
    from ..runtime.kernel_launch import LaunchableKernel

    entry = _entry_name(lowered, entry)
    check_writebacks(lowered.get(entry), returns.writebacks)
    core = [f for f in lowered.functions.values() if f.func_type.is_core]
    device = config.resolved_device()
    with ThreadPoolExecutor(max_workers=min(4, max(1, len(core)))) as pool:
        natives = list(pool.map(lambda f: compile_kernel(f, device), core))
    kernels = {k.name: LaunchableKernel(k, device.aiv_per_cluster) for k in natives}
    orch = generate_orchestration(lowered, entry)
    compiled = CompiledProgram(entry, _signature(lowered.get(entry)), orch.fn, kernels, orch.source,
                               program)
    compiled.lowered = lowered
    compiled.core_types = {f.name: "aic" if f.func_type is FunctionType.AIC else "aiv" for f in core}
    compiled.mlir = {k.name: k.mlir_text for k in natives}
    _set_returns(compiled, returns.arity, returns.writebacks)
    if key is not None:
        _save(compiled, natives, key, device.aiv_per_cluster)
    return compiled


def _set_returns(compiled, arity: int, writebacks) -> None:
    """Tell the runtime which results are Out / InOut tensors' final values (by parameter
    index in the compiled signature) and how many results the user gets back."""
    index = {p.name: i for i, p in enumerate(compiled.signature)}
    compiled.result_arity = arity
    compiled.writebacks = tuple((pos, index[name]) for pos, name in writebacks if name in index)


def _save(compiled, natives, key: tuple, aiv_lanes: int) -> None:
    from ..runtime.artefacts import program_meta
    from . import disk_cache

    def write(folder: Path) -> dict:
        for k in natives:
            k.save(str(folder / k.name))
        return {"orchestration": compiled.source, **program_meta(compiled, aiv_lanes)}

    disk_cache.store(key, write)


def restore_compiled_program(key: tuple) -> Any | None:
    """A `CompiledProgram` from the disk cache (its `program` / `lowered` are None), or None."""
    from . import disk_cache

    return disk_cache.load(key, _restore)


def _restore(folder: Path, meta: dict):
    from ..runtime.artefacts import program_from_meta
    from ..runtime.compiled import CompiledProgram

    # `meta` is sealed: `disk_cache.load` checked it and every file
    compiled = program_from_meta(CompiledProgram, meta, meta["orchestration"], lambda name: folder / name)
    compiled.from_disk = True
    return compiled
