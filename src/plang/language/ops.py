"""Op wrappers on `pl`: unified `pl.<name>` and the explicit `pl.tile` / `pl.tensor` /
`pl.system` namespaces, both resolved against the op registry when called."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import UnsupportedConstructError
from ..ir.ops import REGISTRY
from ..ir.ops.masks import MaskPattern
from .composed import COMPOSED, PARTS
from .dispatch import (
    active_state,
    call_op,
    op_by_spelling,
    scalar_cast_call,
    scalar_form,
    scalar_rhs,
    unified_call,
)

SPELLINGS: tuple[str, ...] = (
    "aic_initialize_pipe", "aiv_initialize_pipe", "create_l1", "create_tensor", "create_tile",
    "expand_clone", "fillpad_expand", "gather_row", "import_peer_buffer", "matmul_mx",
    "matmul_mx_acc", "matmul_mx_bias", "max", "min", "paged_gather",
    "part_add", "part_max", "part_min", "part_mul", "quant_mx", "reinterpret_view",
    "reserve_buffer", "set_validshape", "tmov_x2zz",
)
"""Documented `pl.<name>` spellings that are no op's short name: aliases the dispatcher maps
to an op (`create_tile` -> `tile.create`, `min` -> a scalar min or `tile.minimum`, ...),
compositions of ops (`composed.COMPOSED`: `gather_row`, `paged_gather`, `create_l1`) and
reference names with no CPU meaning (`ASCEND_ONLY`)."""

UNIFIED_NAMES: tuple[str, ...] = tuple(sorted(
    {op.short_name for op in REGISTRY.values() if op.namespace in ("tile", "tensor") and op.unified}
    | set(SPELLINGS)))
"""Every unified op name on `pl`: each tile / tensor op (`Op.unified`) and the spellings."""


ASCEND_ONLY: dict[str, str] = {
    "tmov_x2zz": "the A5 exponent X-to-ZZ layout move",
    "quant_mx": "MXFP8 block quantization",
    "matmul_mx": "MX block-scale matmul",
    "matmul_mx_acc": "MX block-scale matmul with accumulation",
    "matmul_mx_bias": "MX block-scale matmul with bias",
}
"""Reference names for Ascend-only machinery with no CPU meaning (the MX formats have no CPU
implementation), so calling them is an error."""

OP_ALIASES: dict[str, str] = {"tile.ci": "tile.arange", "tensor.ci": "tensor.arange",
                              "tile.fillpad_inplace": "tile.fillpad"}
"""Namespace spellings of the reference that name another op (`pl.tile.ci` is `tile.arange`;
`pl.tile.fillpad_inplace` is `tile.fillpad`: reusing the input's buffer is a placement choice,
the values are the same)."""


def _unified(name: str) -> Callable[..., Any]:
    spelling = f"pl.{name}"

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        active_state(spelling)
        if name in ASCEND_ONLY:
            raise UnsupportedConstructError(
                f"{spelling} ({ASCEND_ONLY[name]}) is Ascend-only machinery and is not available on the "
                "CPU backend"
            )
        if name in COMPOSED:
            return COMPOSED[name](*args, **kwargs)
        spelled = op_by_spelling(spelling)
        if spelled is not None:
            return call_op(spelled, args, kwargs)
        if name == "cast":
            cast = scalar_cast_call(args, kwargs)
            if cast is not None:
                return cast
        return unified_call(name, args, kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = (
        f"`pl.{name}`: dispatched by operand kind to `tile.{name}` / "
        f"`tensor.{name}` (or a scalar expression). Only valid inside a DSL function."
    )
    return wrapper


class OpNamespace:
    """`pl.tile`, `pl.tensor`, `pl.system`, ...: every registered op of one namespace, plus
    `members` (constants such as `pl.tile.MaskPattern`)."""

    def __init__(self, prefix: str, spelling: str = "", members: dict[str, Any] | None = None) -> None:
        self._prefix = prefix
        self._spelling = spelling or f"pl.{prefix}"
        self._cache: dict[str, Callable[..., Any]] = {}
        self.__dict__.update(members or {})

    def __getattr__(self, name: str) -> Callable[..., Any]:
        full = f"{self._prefix}.{name}"
        full = OP_ALIASES.get(full, full)
        fn = self._cache.get(name)
        if fn is not None:
            return fn
        if full not in REGISTRY and name in PARTS and self._prefix in ("tile", "tensor"):
            part, namespace = PARTS[name], self._prefix

            def namespaced(src0: Any, src1: Any) -> Any:
                return part(src0, src1, namespace=namespace)

            namespaced.__name__ = namespaced.__qualname__ = name
            self._cache[name] = namespaced
            return namespaced
        if full not in REGISTRY:
            raise AttributeError(f"{self._spelling} has no op {name!r}")

        scalar = scalar_form(self._prefix, name)
        scalar = scalar if scalar in REGISTRY else None

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # `pl.tensor.add(t, 2.0)`: a scalar rhs means the op's scalar form, as in the reference
            if scalar is not None and scalar_rhs(args, kwargs):
                return call_op(scalar, args, kwargs)
            return call_op(full, args, kwargs)

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = REGISTRY[full].doc
        self._cache[name] = wrapper
        return wrapper

    def __dir__(self) -> list[str]:
        return sorted(n[len(self._prefix) + 1:] for n in REGISTRY if n.startswith(self._prefix + "."))

    def __repr__(self) -> str:
        return f"<{self._spelling} op namespace>"


tile = OpNamespace("tile", members={"MaskPattern": MaskPattern})
tensor = OpNamespace("tensor")
system = OpNamespace("system")
prefetch = OpNamespace("prefetch")
array = OpNamespace("array")
scalar = OpNamespace("scalar")

_g = globals()
for _name in UNIFIED_NAMES:
    _g[_name] = _unified(_name)
del _g, _name

__all__ = ["OpNamespace", "UNIFIED_NAMES", "array", "prefetch", "scalar", "system", "tensor", "tile",
           *UNIFIED_NAMES]
