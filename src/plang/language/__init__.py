"""The `pl` DSL surface: typing helpers, op wrappers, parser constructs and entry points.

`import plang.language as pl` (the reference's `import pypto.language as pl`) is the whole
`pl` face: the names defined above this package (`pl.jit`, the dtypes, the enums) resolve
through the `plang` package (`facade`), which imports this one and so is always loaded.
"""

from . import adir, facade, optimizations
from .constructs import (
    CrossCoreSlot,
    Split,
    at,
    cluster,
    cond,
    const,
    cross_core_slot,
    dump_tag,
    func_attr,
    fused,
    graph,
    manual_scope,
    no_dep,
    parallel,
    pipeline,
    range,
    scope,
    set_cache_policy,
    split,
    split_aiv,
    spmd,
    spmd_submit,
    static_assert,
    static_print,
    submit,
    unroll,
    while_,
    yield_,
)
from .decorators import InlineFunction, function, inline, loads, loads_program, parse, parse_program, program
from .ops import *  # noqa: F403  (the unified op wrappers and op namespaces)
from .ops import UNIFIED_NAMES, array, prefetch, scalar, system, tensor, tile
from .values import (
    Array,
    AsyncEvent,
    AsyncSession,
    DSLValue,
    DynVar,
    InOut,
    IntLike,
    MemRef,
    Out,
    PrefetchAsyncContext,
    Ptr,
    PtrType,
    Scalar,
    TaskId,
    Tensor,
    TensorView,
    Tile,
    TileView,
    Tuple,
    TypeSpec,
    Unknown,
    dynamic,
)

__all__ = [
    "adir",
    "optimizations",
    "Array",
    "AsyncEvent",
    "AsyncSession",
    "CrossCoreSlot",
    "DSLValue",
    "DynVar",
    "InOut",
    "IntLike",
    "InlineFunction",
    "MemRef",
    "Out",
    "PrefetchAsyncContext",
    "Ptr",
    "PtrType",
    "Scalar",
    "Split",
    "TaskId",
    "Tensor",
    "TensorView",
    "Tile",
    "TileView",
    "Tuple",
    "TypeSpec",
    "Unknown",
    "at",
    "cluster",
    "cond",
    "const",
    "cross_core_slot",
    "dump_tag",
    "dynamic",
    "func_attr",
    "function",
    "graph",
    "inline",
    "loads",
    "loads_program",
    "fused",
    "manual_scope",
    "no_dep",
    "parallel",
    "parse",
    "parse_program",
    "pipeline",
    "program",
    "range",
    "scope",
    "set_cache_policy",
    "spmd",
    "spmd_submit",
    "split",
    "split_aiv",
    "static_assert",
    "static_print",
    "submit",
    "unroll",
    "while_",
    "yield_",
    "tile",
    "tensor",
    "system",
    "prefetch",
    "array",
    "scalar",
    *UNIFIED_NAMES,
]


def __getattr__(name: str):
    if not name.startswith("__"):
        face = facade.facade()
        if name in vars(face):
            return vars(face)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {n for n in vars(facade.facade()) if not n.startswith("_")})
