"""`pld` (`import plang.distributed as pld`): the distributed surface of the language.

Window buffers every rank can reach (`alloc_window_buffer`, `window`), tensors bound to them
(`DistributedTensor`), one-sided transfers (`pld.tensor.put` / `get`, `remote_load` /
`remote_store`), cross-rank signals (`pld.system.notify` / `wait`) and collectives
(`pld.tensor.allreduce`, `allgather`, `reduce_scatter`, `broadcast`, `all_to_all(_v)`,
`barrier`). Like `pl`, the 3-segment form names the op (`pld.system.rank`) and the short form
is the same op (`pld.rank`). Programs using them parse, print and round-trip; running them
needs the distributed runtime.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..dtypes import DataType
from ..errors import ParserTypeError
from ..ir.enums import AtomicType, NotifyOp, ReduceOp, WaitCmp
from ..ir.types import CommCtxType, DistributedTensorType
from ..language.dispatch import binary_operator, call_op, namespace_of
from ..language.ops import OpNamespace
from ..language.values import DSLValue, Tensor, TypeSpec, tensor_spec

_WINDOW_MARKER = "window_buffer="
MODULE_NAMES = ("plang.distributed", "plang.language.distributed")
"""The names `pld` is imported under (plang's and the reference's import path)."""


class DistributedTensor(Tensor):
    """A tensor bound to this rank's slice of a window buffer:
    `pld.DistributedTensor[[dims], dtype]`, with the same optional items as `pl.Tensor`."""

    __slots__ = ()

    def __class_getitem__(cls, item: Any) -> TypeSpec:
        parts = item if isinstance(item, tuple) else (item,)
        if parts and isinstance(parts[-1], str) and parts[-1].startswith(_WINDOW_MARKER):
            parts = parts[:-1]  # a dump's informational back-reference to its window buffer
        return tensor_spec(parts, DistributedTensorType, "pld.DistributedTensor")


CommCtx = TypeSpec(CommCtxType())
"""`pld.CommCtx`: the annotation of a communication context (`pld.get_comm_ctx(t)`)."""


class _Namespace(OpNamespace):
    """`pld.system` / `pld.tensor` / `pld.tile`; `overrides` are wrappers that normalise their
    arguments before the op is called."""

    def __init__(self, prefix: str, overrides: dict[str, Callable[..., Any]]) -> None:
        super().__init__(prefix, prefix)
        self._cache.update(overrides)


def _op(name: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return call_op(name, args, kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name.rsplit(".", 1)[1]
    return wrapper


world_size = _op("pld.system.world_size")
get_comm_ctx = _op("pld.system.get_comm_ctx")
rank = _op("pld.system.rank")
nranks = _op("pld.system.nranks")
window = _op("pld.tensor.window")
remote_load = _op("pld.tile.remote_load")


def alloc_window_buffer(size: Any, *, dtype: DataType | None = None, name: str = "") -> Any:
    """A per-rank window buffer of `size` bytes, or of a shape and `dtype=` (its byte size)."""
    if isinstance(size, (list, tuple)):
        if not isinstance(dtype, DataType):
            raise ParserTypeError("pld.alloc_window_buffer with a shape needs dtype=, e.g. dtype=pl.FP32")
        if not size:
            raise ParserTypeError("pld.alloc_window_buffer shape must not be empty")
        total: Any = dtype.itemsize
        for d in size:
            if isinstance(d, int) and not isinstance(d, bool) and d <= 0:
                raise ParserTypeError(f"pld.alloc_window_buffer shape dims must be positive, got {d}")
            total = binary_operator("mul", total, d) if isinstance(d, DSLValue) else total * d
        size = total
    elif dtype is not None:
        raise ParserTypeError("pld.alloc_window_buffer takes dtype= only with a shape, not a byte size")
    return call_op("pld.tensor.alloc_window_buffer", (size,), {"name": name} if name else {})


def remote_store(src: Any, target: Any, peer: Any, offsets: Sequence[Any], *,
                 atomic: AtomicType = AtomicType.None_) -> Any:
    """Store a tile (`pld.tile.remote_store`) or tensor (`pld.tensor.remote_store`) into the peer
    rank's slice of `target` at `offsets`."""
    ns = "tile" if namespace_of(src) == "tile" else "tensor"
    return call_op(f"pld.{ns}.remote_store", (src, target, peer, offsets), {"atomic": atomic})


system = _Namespace("pld.system", {})
tensor = _Namespace("pld.tensor", {"alloc_window_buffer": alloc_window_buffer})
tile = _Namespace("pld.tile", {})

__all__ = [
    "AtomicType", "CommCtx", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp",
    "alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load", "remote_store",
    "system", "tensor", "tile", "window", "world_size",
]
