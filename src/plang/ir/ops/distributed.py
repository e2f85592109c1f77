"""Distributed ops (`pld.*`): window buffers shared by every rank, one-sided communication,
cross-rank signals and collectives.

Their operands are window-bound `DistributedTensorType` tensors; a plain tensor is accepted
only where the reference accepts one (the local side of `put` / `get`, the input of a
gathering collective). Their meaning across ranks belongs to the distributed runtime; here
they are typed so that programs parse, print and round-trip.
"""

from __future__ import annotations

from typing import Any

from ...dtypes import INT32, INT64
from ..enums import AtomicType, NotifyOp, ReduceOp, WaitCmp
from ..types import (
    CommCtxType,
    DistributedTensorType,
    PtrType,
    ScalarType,
    TensorType,
    TileType,
    Type,
)
from .common import VOID, P, fmt_type, index_values, require_dtype_attr, require_int_attr
from .registry import Bound, register


def _distributed(b: Bound, name: str) -> DistributedTensorType:
    t = b[name].type
    if not isinstance(t, DistributedTensorType):
        raise b.fail(f"{name!r} must be a window-bound pld.DistributedTensor, got {fmt_type(t)}")
    return t


def _integer(b: Bound, name: str) -> None:
    t = b[name].type
    if not (isinstance(t, ScalarType) and t.dtype.is_int):
        raise b.fail(f"{name!r} must be an integer scalar, got {fmt_type(t)}")


def _enum(b: Bound, name: str, enum: type) -> None:
    if not isinstance(b[name], enum):
        raise b.bad_value(f"{name} must be a pld.{enum.__name__}, got {b[name]!r}")


def _offsets(b: Bound, name: str, t: TensorType) -> None:
    offs = index_values(b, name)
    if len(offs) != t.rank:
        raise b.fail(f"{name!r} has {len(offs)} entries but the tensor has rank {t.rank}")


# -- system -------------------------------------------------------------------------------

def _world_size(b: Bound) -> Type:
    return ScalarType(INT64)


def _comm_ctx(b: Bound) -> Type:
    _distributed(b, "dist_tensor")
    return CommCtxType()


def _ctx_field(b: Bound) -> Type:
    if not isinstance(b.ctx.type, CommCtxType):
        raise b.fail(f"'ctx' must be a pld.CommCtx (from pld.get_comm_ctx), got {fmt_type(b.ctx.type)}")
    return ScalarType(INT32)


def _notify(b: Bound) -> Type:
    _offsets(b, "offsets", _distributed(b, "target"))
    _integer(b, "peer")
    _enum(b, "op", NotifyOp)
    return VOID


def _wait(b: Bound) -> Type:
    _offsets(b, "offsets", _distributed(b, "signal"))
    _enum(b, "cmp", WaitCmp)
    return VOID


def _defer_wait(b: Bound) -> Type:
    _wait(b)
    if b.cmp is not WaitCmp.Ge:
        raise b.bad_value(f"cmp must be pld.WaitCmp.Ge, got {b.cmp!r}")
    return VOID


# -- window buffers and one-sided transfers -------------------------------------------------

def _alloc_window_buffer(b: Bound) -> Type:
    _integer(b, "size")
    return PtrType()


def _window(b: Bound) -> Type:
    if not isinstance(b.buf.type, PtrType):
        raise b.fail(f"'buf' must be a window buffer (pld.alloc_window_buffer), got {fmt_type(b.buf.type)}")
    return DistributedTensorType(index_values(b, "shape"), require_dtype_attr(b, "dtype"))


def _region(b: Bound) -> None:
    given = [b[n] is not None for n in ("dst_offsets", "src_offsets", "shape")]
    if any(given) and not all(given):
        raise b.fail("dst_offsets, src_offsets and shape must be given together")


def _transfer(b: Bound, remote: str, local: str) -> Type:
    rt = _distributed(b, remote)
    lt = b[local].type
    if lt.dtype is not rt.dtype:
        raise b.fail(f"{local!r} dtype {lt.dtype.name} does not match {remote!r} dtype {rt.dtype.name}")
    _integer(b, "peer")
    _region(b)
    for name in ("chunk_rows", "chunk_cols"):
        if name in b:
            require_int_attr(b, name, 0)
    if b.get("pipeline") and not (b.chunk_rows > 0 and b.chunk_cols > 0):
        raise b.bad_value("pipeline=True needs chunk_rows > 0 and chunk_cols > 0")
    if "atomic" in b:
        _enum(b, "atomic", AtomicType)
    return VOID


def _put(b: Bound) -> Type:
    return _transfer(b, "dst", "src")


def _get(b: Bound) -> Type:
    return _transfer(b, "src", "dst")


def _remote_load(b: Bound) -> Type:
    t = _distributed(b, "target")
    _integer(b, "peer")
    _offsets(b, "offsets", t)
    shape = index_values(b, "shape")
    valid = index_values(b, "valid_shape") or None
    return TileType(shape, t.dtype, None, valid)


def _remote_store(b: Bound) -> Type:
    t = _distributed(b, "target")
    src = b[b.op.params[0].name].type
    if src.dtype is not t.dtype:
        raise b.fail(f"source dtype {src.dtype.name} does not match target dtype {t.dtype.name}")
    _integer(b, "peer")
    _offsets(b, "offsets", t)
    _enum(b, "atomic", AtomicType)
    return VOID


# -- collectives ------------------------------------------------------------------------------

def _collective(result: str, *distributed: str, reduce: bool = False) -> Any:
    def deduce(b: Bound) -> Type:
        for name in distributed:
            if b[name] is not None:
                _distributed(b, name)
        if "signal" in b and b.signal is not None and b.signal.type.dtype is not INT32:
            raise b.fail(f"'signal' must be an INT32 tensor, got {fmt_type(b.signal.type)}")
        if reduce:
            _enum(b, "op", ReduceOp)
        if "root" in b:
            require_int_attr(b, "root", 0)
        return b[result].type

    return deduce


def _register_all() -> None:
    def reg(name: str, params: list, deduce: Any, unit: str, doc: str, **facts: Any) -> None:
        register(name, params, deduce, unit=unit, doc=doc, spelling=name, unified=False, **facts)

    reg("pld.system.world_size", [], _world_size, "system",
        "Number of ranks of the distributed run (host orchestration only), an INT64 scalar.")
    reg("pld.system.get_comm_ctx", [P("dist_tensor", "tensor")], _comm_ctx, "system",
        "The communication context of a window-bound distributed tensor.", reads=())
    for field, what in (("rank", "This rank's index"), ("nranks", "The number of ranks")):
        reg(f"pld.system.{field}", [P("ctx", "value")], _ctx_field, "system",
            f"{what} in a communication context, an INT32 scalar.")
    reg("pld.system.notify", [P("target", "tensor"), P("peer", "scalar"), P("offsets", "index_list"),
                              P("value", "scalar"), P("op", "attr")], _notify, "sync",
        "Add to (NotifyOp.AtomicAdd) or set (NotifyOp.Set) the peer rank's signal slot.",
        writes=("target",), reads=())
    wait = [P("signal", "tensor"), P("offsets", "index_list"), P("expected", "scalar"), P("cmp", "attr")]
    reg("pld.system.wait", wait, _wait, "sync",
        "Block until this rank's signal slot compares cmp to expected.")
    reg("pld.system.defer_wait", wait, _defer_wait, "sync",
        "Keep the enclosing task incomplete until this rank's signal slot is >= expected.")

    reg("pld.tensor.alloc_window_buffer", [P("size", "scalar"), P("name", "attr", "")],
        _alloc_window_buffer, "alloc",
        "A per-rank window buffer of size bytes that every rank can reach (host orchestration).")
    reg("pld.tensor.window", [P("buf", "value"), P("shape", "index_list"), P("dtype", "attr")], _window,
        "alloc", "A distributed tensor of shape and dtype viewing a window buffer.")
    region = [P("dst_offsets", "index_list", None), P("src_offsets", "index_list", None),
              P("shape", "index_list", None)]
    chunks = [P("chunk_rows", "attr", 0), P("chunk_cols", "attr", 0), P("pipeline", "attr", False)]
    atomic = [P("atomic", "attr", AtomicType.None_)]
    reg("pld.tensor.put", [P("dst", "tensor"), P("peer", "scalar"), P("src", "tensor"), *region,
                           *atomic, *chunks], _put, "memory",
        "Copy local src (or its region) into the peer rank's slice of dst.",
        writes=("dst",), reads=("src",))
    reg("pld.tensor.get", [P("dst", "tensor"), P("peer", "scalar"), P("src", "tensor"), *region, *chunks],
        _get, "memory", "Copy the peer rank's slice of src (or its region) into local dst.",
        writes=("dst",), reads=("src",))
    stages = [P("stage", "tile"), P("stage2", "tile", None)]
    reg("pld.tile.put", [P("dst", "tensor"), P("peer", "scalar"), P("src", "tensor"), *stages, *region,
                         *atomic], _put, "memory",
        "pld.tensor.put staged through a vector tile.", writes=("dst",), reads=("src",))
    reg("pld.tile.get", [P("dst", "tensor"), P("peer", "scalar"), P("src", "tensor"), *stages, *region],
        _get, "memory", "pld.tensor.get staged through a vector tile.", writes=("dst",), reads=("src",))
    reg("pld.tile.remote_load", [P("target", "tensor"), P("peer", "scalar"), P("offsets", "index_list"),
                                 P("shape", "index_list"), P("valid_shape", "index_list", None)],
        _remote_load, "memory", "Load a window of the peer rank's slice of target into a tile.")
    remote = [P("target", "tensor"), P("peer", "scalar"), P("offsets", "index_list"), *atomic]
    reg("pld.tile.remote_store", [P("src_tile", "tile"), *remote], _remote_store, "memory",
        "Store a tile into the peer rank's slice of target at offsets.",
        writes=("target",), reads=("src_tile",))
    reg("pld.tensor.remote_store", [P("src", "tensor"), *remote], _remote_store, "memory",
        "Store a tensor into the peer rank's slice of target at offsets.",
        writes=("target",), reads=("src",))

    reduce = [P("op", "attr", ReduceOp.Sum)]
    signal = P("signal", "tensor")
    reg("pld.tensor.allreduce", [P("target", "tensor"), P("signal", "tensor", None), *reduce,
                                 P("mode", "attr", "mesh"), P("core_num", "attr", 1)],
        _collective("target", "target", "signal", reduce=True), "memory",
        "Reduce target across every rank in place (op: a pld.ReduceOp).", writes=("target",))
    reg("pld.tensor.barrier", [signal], _collective("signal", "signal"), "sync",
        "Wait until every rank reaches this barrier.", writes=("signal",))
    reg("pld.tensor.broadcast", [P("target", "tensor"), signal, P("root", "attr")],
        _collective("target", "target", "signal"), "memory",
        "Copy rank root's target to every rank in place.", writes=("target",))
    reg("pld.tensor.reduce_scatter", [P("target", "tensor"), signal, *reduce],
        _collective("target", "target", "signal", reduce=True), "memory",
        "Reduce target across ranks; each rank keeps its own chunk.", writes=("target",))
    gathered = [P("input", "tensor"), P("target", "tensor"), signal]
    reg("pld.tensor.allgather", gathered, _collective("target", "target", "signal"), "memory",
        "Gather every rank's input into target on every rank.", writes=("target",), reads=("input",))
    reg("pld.tensor.all_to_all", gathered, _collective("target", "target", "signal"), "memory",
        "Exchange equal chunks of input between every pair of ranks into target.",
        writes=("target",), reads=("input",))
    reg("pld.tensor.all_to_all_v", [*gathered, P("send_counts", "tensor"), P("recv_counts", "tensor")],
        _collective("target", "target", "signal", "recv_counts"), "memory",
        "all_to_all with per-rank element counts.", writes=("target", "recv_counts"),
        reads=("input", "send_counts"))


_register_all()
