"""The MLIR adapter: lowering code builds modules with the dialect builders re-exported here
(`ir`, `arith`, `func`, `math`, `memref`, `scf`, `vector`, `llvm`, `x86`); this module
verifies them and turns them into native code (`compile_native`).

The bindings (PyPI `torch-mlir`: upstream MLIR's `ir`, `dialects`, `passmanager`,
`ExecutionEngine`) are imported here and in `llvm_stage.py` only; that one runs the LLVM
stage — one named pipeline (`PIPELINE`), target attributes, `ExecutionEngine(opt_level=3)`
— in compile-worker processes (`compile_workers.py`), so an LLVM abort never ends the
user's process. A worker hands back an object file, linked here with the system `cc
-shared` (plus plang's conversion helpers) into a `.so` that is `dlopen`ed: the packed entry
point `plang_entry_<fn>(void **args)` as a ctypes function, so the GIL is released while
native code runs (in process, without workers, the engine's own packed wrapper of the C
interface is called instead: compiled for the host, it runs only where it was built). The
same `.so` is what the disk cache persists; `native.load_shared_object` loads it in any
later process without importing this module.
"""

from __future__ import annotations

import os
import tempfile

from torch_mlir import ir
from torch_mlir.dialects import arith, builtin, func, llvm, math, memref, scf, vector, x86

from ...target import Isa
from . import compile_workers, llvm_stage
from .llvm_stage import PIPELINE, PIPELINE_NAME, StageError
from .native import (
    PACKED,
    KernelCompileError,
    NativeFunction,
    helper_library,
    link_shared_object,
    load_shared_object,
)

__all__ = ["ir", "arith", "builtin", "func", "llvm", "math", "memref", "scf", "vector", "x86",
           "PIPELINE_NAME", "PIPELINE", "KernelCompileError", "new_context", "verify",
           "compile_native", "save_shared_object"]


def new_context() -> ir.Context:
    """A fresh MLIR context (one per kernel compile; contexts are not shared across threads)."""
    return ir.Context()


def verify(module: ir.Module, what: str) -> None:
    """Run the MLIR verifier; raise `KernelCompileError` naming `what` on failure."""
    try:
        ok = module.operation.verify()
    except ir.MLIRError as e:
        raise KernelCompileError(f"{what}: generated MLIR does not verify: {e}") from None
    if not ok:
        raise KernelCompileError(f"{what}: generated MLIR does not verify")


def compile_native(module: ir.Module, fn_name: str, what: str, isa: Isa) -> tuple[NativeFunction, str | None]:
    """Native code for a verified module, for `isa`: through a compile worker (an object file
    linked into a shared library here; returns it and its path), or in process when workers
    are off (returns the JIT's entry, whose owner is the engine, and None)."""
    workers = compile_workers.pool()
    if workers is not None:
        obj = workers.compile_object(str(module), fn_name, isa.cpu, isa.llvm_features, helper_library(), what)
        library = obj[:-2] + ".so"
        link_shared_object([obj], library, what)
        os.unlink(obj)
        return load_shared_object(library, fn_name), library
    try:
        llvm_stage.lower_to_llvm(module, fn_name, isa.cpu, isa.llvm_features)
        address, engine = llvm_stage.jit(module, fn_name, helper_library())
    except StageError as e:
        raise KernelCompileError(f"{what}: {e}") from None
    return NativeFunction(fn_name, PACKED(address), engine), None


def save_shared_object(engine, path: str, what: str) -> None:
    """Persist an in-process JIT engine's code as a shared library at `path`."""
    with tempfile.TemporaryDirectory(prefix="plang-obj-") as d:
        obj = os.path.join(d, "kernel.o")
        try:
            llvm_stage.dump_object(engine, obj)
        except StageError as e:
            raise KernelCompileError(f"{what}: {e}") from None
        link_shared_object([obj], path, what)
