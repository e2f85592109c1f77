"""Op registry and every registered op (importing this package registers them all)."""

from . import array, elementwise, layout, matmul, memory, pipe, reduce, system_ops  # noqa: F401  (registration)
from .registry import (
                       REGISTRY,
                       Bound,
                       Op,
                       OpFacts,
                       OpTypeError,
                       OpValueError,
                       Param,
                       as_expr,
                       get_op,
                       make_call,
                       register,
)

__all__ = ["REGISTRY", "Bound", "Op", "OpFacts", "OpTypeError", "OpValueError", "Param",
           "as_expr", "get_op", "make_call", "register"]
