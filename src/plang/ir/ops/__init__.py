"""Op registry and every registered op (importing this package registers them all)."""

from . import system_ops, tensor_ops, tile_ops  # noqa: F401  (registration side effects)
from .registry import (REGISTRY, Bound, Op, OpFacts, OpTypeError, OpValueError, Param, as_expr,
                       get_op, make_call, register)

__all__ = ["REGISTRY", "Bound", "Op", "OpFacts", "OpTypeError", "OpValueError", "Param",
           "as_expr", "get_op", "make_call", "register"]
