"""The LLVM stage of a kernel compile: MLIR text -> LLVM dialect -> native object file.

LLVM reports some failures (an instruction the target cannot select, a legalization it does
not know) by calling `abort()`. So this stage runs in compile-worker processes: this file
is also a script (`python llvm_stage.py`) that imports only the standard library and the
MLIR bindings — never plang or torch, so a worker starts in ~0.1 s — and serves requests, one
JSON line each way, on stdin / stdout. A worker that dies takes only its request with it;
`compile_workers.py` turns that into a `KernelCompileError` carrying LLVM's message.

The same functions run in process when workers are off (`PLANG_COMPILE_WORKERS=0`).
"""

from __future__ import annotations

import json
import os
import sys

from torch_mlir import ir, passmanager
from torch_mlir.execution_engine import ExecutionEngine

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


class StageError(Exception):
    """The lowering pipeline or the JIT reported an error (as an exception, not an abort)."""


def entry_symbol(fn_name: str) -> str:
    """The packed entry point `lower_to_llvm` adds for kernel `fn_name` (`abi.py`; the
    runtime's `native.packed_symbol`: this script imports nothing of plang)."""
    return f"plang_entry_{fn_name}"


def lower_to_llvm(module: ir.Module, fn_name: str, cpu: str, features: list[str]) -> None:
    """Lower `module` in place with `PIPELINE`, add the packed entry point of `fn_name`, then
    give every LLVM function the target's `target_cpu` / `target_features` (the JIT's own
    target is the host: these attributes make it generate code for the chosen level).

    The entry is defined here rather than taken from the `ExecutionEngine`, which adds a
    packed wrapper `_mlir_<f>` of every function f itself, after this stage, without the
    attributes: compiled for the host, a v3 kernel built on an AVX-512 machine copied its
    memref descriptors with zmm moves there, an illegal instruction on an AVX2 CPU."""
    try:
        passmanager.PassManager.parse(PIPELINE).run(module.operation)
    except ir.MLIRError as e:
        raise StageError(f"lowering pipeline {PIPELINE_NAME} failed: {e}") from None
    _add_entry(module, fn_name)
    cpu_attr = ir.StringAttr.get(cpu)
    quoted = ", ".join(f'"{f}"' for f in features)
    feature_attr = ir.Attribute.parse(f"#llvm.target_features<[{quoted}]>")
    for op in module.body.operations:
        if op.operation.name == "llvm.func":
            op.attributes["target_cpu"] = cpu_attr
            op.attributes["target_features"] = feature_attr


def _add_entry(module: ir.Module, fn_name: str) -> None:
    """`void plang_entry_<fn>(void **args)`: loads argument i from the slot `args[i]` points
    to and calls the C interface `_mlir_ciface_<fn>` with them."""
    target = f"_mlir_ciface_{fn_name}"
    ciface = next((op for op in module.body.operations if op.operation.name == "llvm.func"
                   and ir.StringAttr(op.attributes["sym_name"]).value == target), None)
    if ciface is None:
        raise StageError(f"the lowered module has no function {target}")
    if not str(ir.TypeAttr(ciface.attributes["function_type"]).value).startswith("!llvm.func<void "):
        raise StageError(f"{target} returns a value, a kernel returns nothing")
    types = [str(a.type) for a in ciface.regions[0].blocks[0].arguments]
    lines = [f"llvm.func @{target}({', '.join(types)})",  # a declaration, for the parser's checks
             f"llvm.func @{entry_symbol(fn_name)}(%args: !llvm.ptr) {{"]
    for i, t in enumerate(types):
        lines += [f"  %slot{i} = llvm.getelementptr %args[{i}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr",
                  f"  %at{i} = llvm.load %slot{i} : !llvm.ptr -> !llvm.ptr",
                  f"  %a{i} = llvm.load %at{i} : !llvm.ptr -> {t}"]
    values = ", ".join(f"%a{i}" for i in range(len(types)))
    lines += [f"  llvm.call @{target}({values}) : ({', '.join(types)}) -> ()", "  llvm.return", "}"]
    entry = ir.Module.parse("\n".join(lines))
    module.body.append(entry.body.operations[1].operation)  # moved into the kernel's module


def jit(module: ir.Module, fn_name: str, helper_library: str) -> tuple[int, ExecutionEngine]:
    """JIT-compile a module lowered to LLVM; (address of the packed entry point, engine)."""
    try:
        engine = ExecutionEngine(module, opt_level=OPT_LEVEL, shared_libs=[helper_library], enable_pic=True)
        address = engine.raw_lookup(f"_mlir_ciface_{fn_name}")  # the engine adds "_mlir_"
    except (RuntimeError, ir.MLIRError) as e:
        raise StageError(f"JIT compilation failed: {e}") from None
    if not address:
        raise StageError(f"JIT produced no symbol _mlir__mlir_ciface_{fn_name}")
    return address, engine


def dump_object(engine: ExecutionEngine, path: str) -> None:
    """Write the JIT's code as an object file at `path`."""
    engine.dump_to_object_file(path)
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        raise StageError("the JIT produced no object file")


def compile_to_object(request: dict) -> None:
    """One worker request: MLIR text (verified) -> object file at `request["object"]`."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(request["mlir"])
        lower_to_llvm(module, request["fn"], request["cpu"], request["features"])
        _, engine = jit(module, request["fn"], request["helper_library"])
        dump_object(engine, request["object"])


def serve() -> None:
    """The worker loop: one JSON request per stdin line, one JSON reply per stdout line."""
    for line in sys.stdin:
        try:
            compile_to_object(json.loads(line))
            reply = {"ok": True}
        except StageError as e:
            reply = {"ok": False, "error": str(e)}
        except Exception as e:  # a bad request: report it, keep serving
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
