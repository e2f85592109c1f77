"""System ops (`system.*`): cross-core synchronisation and chip queries, plus the block /
sub-block index queries of both families."""

from __future__ import annotations

from ...dtypes import INDEX
from ..enums import KernelType, SyncAllMode
from ..types import ScalarType, Type
from .common import VOID, P, require_int_attr
from .registry import Bound, register


def _index(b: Bound) -> Type:
    return ScalarType(INDEX)


def _sync(b: Bound) -> Type:
    require_int_attr(b, "event_id", 0)
    if b.core is not None and not isinstance(b.core, KernelType):
        raise b.bad_value(f"core must be a pl.KernelType, got {b.core!r}")
    return VOID


def _syncall(b: Bound) -> Type:
    if not isinstance(b.mode, SyncAllMode):
        raise b.bad_value(f"mode must be a pl.SyncAllMode, got {b.mode!r}")
    if not isinstance(b.core, KernelType):
        raise b.bad_value(f"core must be a pl.KernelType, got {b.core!r}")
    return VOID


def _register_all() -> None:
    sync = [P("event_id", "attr"), P("core", "attr", None)]
    register("system.sync_set", sync, _sync, unit="sync",
             doc="Signal cross-core event event_id (core: the kernel that sets it).")
    register("system.sync_wait", sync, _sync, unit="sync",
             doc="Block until cross-core event event_id has been signalled, then consume it.")
    register("system.syncall", [P("mode", "attr", SyncAllMode.HARD), P("core", "attr", KernelType.MIX)],
             _syncall, unit="sync", doc="Barrier across every block of the current SPMD launch.")
    register("system.available_cluster_count", [], _index, unit="system",
             doc="Number of core groups (clusters) of the run's device.")
    register("system.available_aiv_count", [], _index, unit="system",
             doc="Number of vector (AIV) cores of the run's device.")
    queries = {"get_block_idx": "Index of the current block in an SPMD launch.",
               "get_block_num": "Number of blocks in the current SPMD launch.",
               "get_subblock_idx": "Index of the current AIV lane (0 or 1) within its core group."}
    for ns in ("tensor", "tile"):
        for name, doc in queries.items():
            register(f"{ns}.{name}", [], _index, unit="scalar", doc=doc)


_register_all()
