"""`@pl.jit`: specialization from torch tensors, shape-specialized caching, compile / lower."""

from .compiler import compile_program
from .function import JITFunction, jit
from .signature import RUNTIME

__all__ = ["JITFunction", "RUNTIME", "compile_program", "jit"]
