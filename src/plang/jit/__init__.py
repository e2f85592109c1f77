"""`@pl.jit`: specialization from torch tensors, shape-specialized caching, compile / lower."""

from .function import JITFunction, jit
from .signature import RUNTIME

__all__ = ["JITFunction", "RUNTIME", "jit"]
