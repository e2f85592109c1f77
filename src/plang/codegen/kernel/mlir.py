"""The MLIR adapter: the only module in plang that imports the MLIR Python bindings.

The bindings come from PyPI `torch-mlir` (upstream MLIR's `ir`, `dialects`, `passmanager`
and `ExecutionEngine`). Lowering code builds modules with the dialect builders re-exported
here (`ir`, `arith`, `func`, `math`, `memref`, `scf`, `vector`, `llvm`, `x86`); this module
verifies them, lowers them to the LLVM dialect with one named pipeline (`PIPELINE`),
JIT-compiles them with `ExecutionEngine(opt_level=3)` and hands back a `NativeFunction`:
the packed entry point `_mlir__mlir_ciface_<fn>(void **args)` as a ctypes function, so
the GIL is released while native code runs.

Persisting: `save_shared_object` dumps the JIT's object file and links it with the system
`cc -shared` into a `.so` (engines are built position independent, the link writes through
a temp file + rename); `native.load_shared_object` `dlopen`s it in any later process without
importing this module.
"""

from __future__ import annotations

import os
import tempfile

from torch_mlir import ir, passmanager
from torch_mlir.dialects import arith, func, llvm, math, memref, scf, vector, x86
from torch_mlir.execution_engine import ExecutionEngine

from .native import PACKED, KernelCompileError, NativeFunction, link_shared_object, packed_symbol

__all__ = ["ir", "arith", "func", "llvm", "math", "memref", "scf", "vector", "x86",
           "PIPELINE_NAME", "PIPELINE", "KernelCompileError", "new_context", "verify",
           "lower_to_llvm", "jit", "save_shared_object"]

PIPELINE_NAME = "plang-cpu-llvm"
"""Name of the one lowering pipeline every kernel goes through."""

PIPELINE = (
    "builtin.module(convert-vector-to-scf{full-unroll=true}, lower-affine, convert-scf-to-cf,"
    " func.func(convert-math-to-llvm), convert-vector-to-llvm{enable-x86=1},"
    " expand-strided-metadata, finalize-memref-to-llvm, convert-math-to-libm,"
    " convert-cf-to-llvm, convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm,"
    " convert-ub-to-llvm, reconcile-unrealized-casts)"
)

OPT_LEVEL = 3


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


def lower_to_llvm(module: ir.Module, what: str) -> None:
    """Lower `module` in place to the LLVM dialect with `PIPELINE`."""
    try:
        passmanager.PassManager.parse(PIPELINE).run(module.operation)
    except ir.MLIRError as e:
        raise KernelCompileError(f"{what}: lowering pipeline {PIPELINE_NAME} failed: {e}") from None


def jit(module: ir.Module, fn_name: str, what: str) -> tuple[NativeFunction, ExecutionEngine]:
    """JIT-compile a module already lowered to LLVM; returns the entry and its engine."""
    try:
        engine = ExecutionEngine(module, opt_level=OPT_LEVEL, enable_pic=True)
        address = engine.raw_lookup(f"_mlir_ciface_{fn_name}")  # the engine adds "_mlir_"
    except (RuntimeError, ir.MLIRError) as e:
        raise KernelCompileError(f"{what}: JIT compilation failed: {e}") from None
    if not address:
        raise KernelCompileError(f"{what}: JIT produced no symbol {packed_symbol(fn_name)}")
    return NativeFunction(fn_name, PACKED(address), engine), engine


def save_shared_object(engine: ExecutionEngine, path: str, what: str) -> None:
    """Persist a JIT engine's code as a shared library at `path` (temp file + rename)."""
    with tempfile.TemporaryDirectory(prefix="plang-obj-") as d:
        obj = os.path.join(d, "kernel.o")
        engine.dump_to_object_file(obj)
        if not os.path.exists(obj) or os.path.getsize(obj) == 0:
            raise KernelCompileError(f"{what}: the JIT produced no object file")
        link_shared_object([obj], path, what)
