"""Op registry and every registered op (importing this package registers them all)."""

from . import (  # noqa: F401  (registration)
    array,
    composite,
    distributed,
    elementwise,
    gather_compare,
    generate,
    indexing,
    layout,
    masks,
    matmul,
    memory,
    padding,
    pipe,
    prefetch,
    reduce,
    rng,
    sort,
    system_ops,
    tensor_views,
    views,
)
from .registry import (
                       REGISTRY,
                       Bound,
                       Op,
                       OpFacts,
                       OpTypeError,
                       OpValueError,
                       Param,
                       ParamKind,
                       Pattern,
                       Unit,
                       as_expr,
                       get_op,
                       make_call,
                       ops_where,
                       register,
)

__all__ = ["REGISTRY", "Bound", "Op", "OpFacts", "OpTypeError", "OpValueError", "Param", "ParamKind",
           "Pattern", "Unit", "as_expr", "get_op", "make_call", "ops_where", "register"]
