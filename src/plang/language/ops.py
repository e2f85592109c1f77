"""Op wrappers on `pl`: unified `pl.<name>` and the explicit `pl.tile` / `pl.tensor` /
`pl.system` namespaces, both resolved against the op registry when called."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import UnsupportedConstructError
from ..ir.ops import REGISTRY
from .dispatch import active_state, call_op, cast_scalar, op_by_spelling, unified_call

UNIFIED_NAMES: tuple[str, ...] = (
    "add",
    "sub",
    "mul",
    "div",
    "part_add",
    "part_mul",
    "part_max",
    "part_min",
    "maximum",
    "minimum",
    "min",
    "max",
    "exp",
    "tanh",
    "sigmoid",
    "log",
    "cast",
    "concat",
    "reshape",
    "reinterpret_view",
    "transpose",
    "slice",
    "matmul",
    "batch_matmul",
    "row_max",
    "row_sum",
    "row_min",
    "row_prod",
    "col_sum",
    "col_max",
    "col_min",
    "col_prod",
    "row_argmax",
    "row_argmin",
    "col_argmax",
    "col_argmin",
    "row_expand",
    "row_expand_add",
    "row_expand_sub",
    "row_expand_mul",
    "row_expand_div",
    "row_expand_max",
    "row_expand_min",
    "row_expand_expdif",
    "col_expand",
    "col_expand_mul",
    "col_expand_div",
    "col_expand_sub",
    "col_expand_add",
    "col_expand_max",
    "col_expand_min",
    "col_expand_expdif",
    "expand_clone",
    "expands",
    "neg",
    "abs",
    "recip",
    "read",
    "write",
    "create_tile",
    "fillpad",
    "fillpad_expand",
    "load",
    "store",
    "move",
    "gatherb",
    "mgather",
    "mscatter",
    "sqrt",
    "rsqrt",
    "relu",
    "matmul_acc",
    "matmul_bias",
    "matmul_mx",
    "matmul_mx_acc",
    "matmul_mx_bias",
    "gemv",
    "gemv_acc",
    "gemv_bias",
    "cmp",
    "cmps",
    "set_validshape",
    "rem",
    "rems",
    "fmod",
    "fmods",
    "and_",
    "ands",
    "or_",
    "ors",
    "xor",
    "xors",
    "shl",
    "shls",
    "shr",
    "shrs",
    "maximums",
    "minimums",
    "prelu",
    "not_",
    "addc",
    "subc",
    "addsc",
    "subsc",
    "lrelu",
    "sel",
    "sels",
    "tri",
    "quant_mx",
    "tmov_x2zz",
    "tpush_to_aiv",
    "tpush_to_aic",
    "aiv_shard",
    "aic_gather",
    "tpop_from_aic",
    "tpop_from_aiv",
    "aic_initialize_pipe",
    "aiv_initialize_pipe",
    "reserve_buffer",
    "import_peer_buffer",
    "tfree_to_aic",
    "tfree_to_aiv",
    "assemble",
    "cos",
    "gather_row",
    "mrgsort",
    "scatter_update",
    "sin",
    "sort32",
    "create_tensor",
    "dim",
    "full",
    "scatter",
    "arange",
    "gather",
    "paged_gather",
    "random",
    "create_l1",
    "get_block_idx",
    "get_block_num",
    "get_subblock_idx",
)
"""The documented unified op names on `pl`."""


ASCEND_ONLY: dict[str, str] = {
    "aic_initialize_pipe": "cross-core pipe set-up on the cube",
    "aiv_initialize_pipe": "cross-core pipe set-up on the vector lanes",
    "reserve_buffer": "a named cross-core buffer reservation",
    "import_peer_buffer": "importing a peer function's cross-core buffer",
    "tmov_x2zz": "the A5 exponent X-to-ZZ layout move",
    "quant_mx": "MXFP8 block quantization",
    "matmul_mx": "MX block-scale matmul",
    "matmul_mx_acc": "MX block-scale matmul with accumulation",
    "matmul_mx_bias": "MX block-scale matmul with bias",
}
"""Reference names for Ascend-only machinery: on the CPU backend the runtime owns pipes and
buffers, and the MX formats have no CPU implementation, so calling them is an error."""


def _unified(name: str) -> Callable[..., Any]:
    spelling = f"pl.{name}"

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        active_state(spelling)
        if name in ASCEND_ONLY:
            raise UnsupportedConstructError(
                f"{spelling} ({ASCEND_ONLY[name]}) is Ascend-only machinery and is not available on the "
                "CPU backend",
                hint="the CPU runtime creates the cross-core pipes and buffers itself"
                if "pipe" in name or "buffer" in name else "",
            )
        spelled = op_by_spelling(spelling)
        if spelled is not None:
            return call_op(spelled, args, kwargs)
        if name == "cast" and len(args) == 2 and not kwargs:
            from .dispatch import namespace_of

            if namespace_of(args[0]) is None:
                return cast_scalar(args[0], args[1])
        return unified_call(name, args, kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = (
        f"`pl.{name}`: dispatched by operand kind to `tile.{name}` / "
        f"`tensor.{name}` (or a scalar expression). Only valid inside a DSL function."
    )
    return wrapper


class OpNamespace:
    """`pl.tile`, `pl.tensor`, `pl.system`, ...: every registered op of one namespace."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._cache: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Callable[..., Any]:
        full = f"{self._prefix}.{name}"
        fn = self._cache.get(name)
        if fn is not None:
            return fn
        if full not in REGISTRY:
            raise AttributeError(f"pl.{self._prefix} has no op {name!r}")

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return call_op(full, args, kwargs)

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = REGISTRY[full].doc
        self._cache[name] = wrapper
        return wrapper

    def __dir__(self) -> list[str]:
        return sorted(n.split(".", 1)[1] for n in REGISTRY if n.startswith(self._prefix + "."))

    def __repr__(self) -> str:
        return f"<pl.{self._prefix} op namespace>"


tile = OpNamespace("tile")
tensor = OpNamespace("tensor")
system = OpNamespace("system")
array = OpNamespace("array")
scalar = OpNamespace("scalar")

_g = globals()
for _name in UNIFIED_NAMES:
    _g[_name] = _unified(_name)
del _g, _name

__all__ = ["OpNamespace", "UNIFIED_NAMES", "array", "scalar", "system", "tensor", "tile", *UNIFIED_NAMES]
