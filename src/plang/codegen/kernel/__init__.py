"""Kernel codegen: core functions (InCore / AIC / AIV) → MLIR → native code.

`compile_kernel(function, device) -> Kernel`, `load_kernel(path) -> Kernel`; the kernel ABI
the runtime calls is in `abi.py`; `mlir.py` (building, in process) and `llvm_stage.py` (the
LLVM stage, in compile workers) are the only modules touching the MLIR bindings, and
importing this package imports neither (`compile_kernel` does, on first use).
"""

from .abi import BoundsError, LaunchContext, PipeApi, Signature
from .kernel import Kernel, compile_external, compile_kernel, load_kernel
from .native import KernelCompileError

__all__ = ["BoundsError", "Kernel", "KernelCompileError", "LaunchContext", "PipeApi", "Signature",
           "compile_external", "compile_kernel", "load_kernel"]
