"""System ops (`system.*`): cross-core synchronisation, pipe flags, barriers and cache
maintenance, chip queries, task-id sentinels, plus the block / sub-block index queries of both
families. On the CPU every core executes its ops in program order over coherent memory, so
the ops that only order hardware pipes or caches (`sync_src`, `bar_*`, `fence`,
`cacheinvalid`, `set_ffts`) have no effect there; the cross-core events (`sync_set` /
`sync_wait`) and `syncall` do order the cores (`codegen/kernel/lower_pipe.py`,
`lower_system.py`)."""

from __future__ import annotations

import math

from ...dtypes import INDEX, INT32, INT64, TASK_ID
from ..enums import KernelType, PipeType, SyncAllMode
from ..types import ArrayType, ScalarType, Type
from .common import VOID, P, fmt_type, require_int_attr, static_ints
from .registry import Bound, register

ORDERING_ONLY = ("sync_src", "sync_dst", "bar_v", "bar_m", "bar_all", "fence", "cacheinvalid", "set_ffts")
"""The `system.*` ops that only order hardware pipes or caches: no effect on the CPU."""


def _index(b: Bound) -> Type:
    return ScalarType(INDEX)


def _sync(b: Bound) -> Type:
    require_int_attr(b, "event_id", 0)
    if b.core is not None and not isinstance(b.core, KernelType):
        raise b.bad_value(f"core must be a pl.KernelType, got {b.core!r}")
    if b.pipe is not None:
        _pipe(b, "pipe")
    if b.get("ffts_mode") is not None:
        require_int_attr(b, "ffts_mode", 0, 2)
    if b.core_type not in (None, "aic", "aiv"):
        raise b.bad_value(f"core_type must be 'aic' or 'aiv', got {b.core_type!r}")
    return VOID


def _syncall(b: Bound) -> Type:
    mode = b.mode
    if isinstance(mode, str) and mode in ("hard", "soft"):
        mode = SyncAllMode(mode)
    if not isinstance(mode, SyncAllMode):
        raise b.bad_value(f"mode must be 'hard', 'soft' or a pl.SyncAllMode, got {b.mode!r}")
    if mode is SyncAllMode.SOFT:  # a GM-polling barrier: a shared INT32 counter line and a count
        ws = b.gm_workspace
        if ws is None or b.used_cores is None:
            raise b.fail("mode='soft' needs gm_workspace= (a shared INT32 tensor of >= 16 elements) "
                         "and used_cores=")
        n = static_ints(ws.type.shape)
        if ws.type.dtype is not INT32 or (None not in n and math.prod(n) < 16):
            raise b.fail(f"gm_workspace must be an INT32 tensor of at least 16 elements, got "
                         f"{fmt_type(ws.type)}")
        if not (isinstance(b.used_cores.type, ScalarType) and b.used_cores.type.dtype.is_int):
            raise b.fail(f"used_cores must be an integer, got {fmt_type(b.used_cores.type)}")
    elif b.gm_workspace is not None or b.used_cores is not None:
        raise b.fail("gm_workspace= and used_cores= belong to mode='soft'")
    if not isinstance(b.core, KernelType):
        raise b.bad_value(f"core must be a pl.KernelType, got {b.core!r}")
    if b.core_type not in (None, "aiv_only", "aic_only", "mix"):
        raise b.bad_value(f"core_type must be 'aiv_only', 'aic_only' or 'mix', got {b.core_type!r}")
    return VOID


def syncall_form(kwargs: dict) -> tuple[str, str]:
    """(mode, core_type) of a `system.syncall` call's attributes: "hard" / "soft" and
    "aiv_only" / "aic_only" / "mix" (`core_type`, else the one `core` names)."""
    mode = kwargs.get("mode") or SyncAllMode.HARD
    core_type = kwargs.get("core_type")
    if core_type is None:
        core_type = {KernelType.AIC: "aic_only", KernelType.AIV: "aiv_only"}.get(kwargs.get("core"), "mix")
    return getattr(mode, "value", mode), core_type


def _pipe(b: Bound, name: str) -> None:
    if not isinstance(b[name], PipeType):
        raise b.bad_value(f"{name} must be a pl.PipeType, got {b[name]!r}")


def _flag(b: Bound) -> Type:
    _pipe(b, "set_pipe")
    _pipe(b, "wait_pipe")
    require_int_attr(b, "event_id", 0)
    return VOID


def _no_operands(b: Bound) -> Type:
    return VOID


def _cacheinvalid(b: Bound) -> Type:
    if b.tensor is None:
        if b.shapes is not None or b.offsets is not None:
            raise b.fail("the whole-GM form takes no shapes / offsets")
        return VOID
    if b.shapes is None or b.offsets is None:
        raise b.fail("the region form needs tensor, shapes and offsets")
    rank = b.tensor.type.rank
    for name in ("shapes", "offsets"):
        if len(b[name].elements) != rank:
            raise b.fail(f"{name} has {len(b[name].elements)} entries; the tensor has rank {rank}")
    return VOID


def _set_ffts(b: Bound) -> Type:
    t = b.workspace.type
    size = static_ints(t.shape)[0] if t.rank == 1 else None
    if t.dtype is not INT64 or size is None or size < 256:
        raise b.fail(f"workspace must be a 1-D INT64 tensor of at least 256 elements, got {fmt_type(t)}")
    return VOID


def _task_id(b: Bound) -> Type:
    return ScalarType(TASK_ID)


def _task_dummy(b: Bound) -> Type:
    if not isinstance(b.deps, tuple):
        raise b.fail(f"deps takes a list of TaskIds, got {b.deps!r}")
    for d in b.deps:
        if d is None:
            continue
        t = getattr(d, "type", None)
        if not (isinstance(t, (ScalarType, ArrayType)) and t.dtype is TASK_ID):
            raise b.fail(f"deps takes TaskIds or arrays of them, got {fmt_type(t) if t else d!r}")
    return ScalarType(TASK_ID)


def _register_all() -> None:
    sync = [P("event_id", "attr"), P("core", "attr", None), P("pipe", "attr", None),
            P("core_type", "attr", None)]
    register("system.sync_set", sync + [P("ffts_mode", "attr", None)], _sync, unit="sync",
             doc="Signal cross-core event event_id (core: the kernel that sets it).")
    register("system.sync_wait", sync, _sync, unit="sync",
             doc="Block until cross-core event event_id has been signalled, then consume it.")
    register("system.syncall", [P("mode", "attr", SyncAllMode.HARD), P("core", "attr", KernelType.MIX),
                                P("core_type", "attr", None), P("gm_workspace", "tensor", None),
                                P("used_cores", "scalar", None)],
             _syncall, unit="sync", reads=("gm_workspace",), writes=("gm_workspace",),
             doc="Barrier across every block of the current SPMD launch (the soft form counts "
             "arrivals in gm_workspace).")
    flag = [P("set_pipe", "attr"), P("wait_pipe", "attr"), P("event_id", "attr")]
    register("system.sync_src", flag, _flag, unit="sync",
             doc="Set flag event_id from set_pipe for wait_pipe (a no-op on the CPU).")
    register("system.sync_dst", flag, _flag, unit="sync",
             doc="Wait in wait_pipe for flag event_id set by set_pipe (a no-op on the CPU).")
    for name, what in (("bar_v", "the vector unit"), ("bar_m", "the cube unit"), ("bar_all", "every unit")):
        register(f"system.{name}", [], _no_operands, unit="sync",
                 doc=f"Barrier across the pipes of {what} (a no-op on the CPU).")
    register("system.fence", [], _no_operands, unit="sync",
             doc="Order this core's global-memory accesses (a no-op on the CPU).")
    register("system.cacheinvalid", [P("tensor", "tensor", None), P("shapes", "index_list", None),
                                     P("offsets", "index_list", None)], _cacheinvalid, unit="sync",
             reads=(), doc="Invalidate the cache line at tensor[offsets], or all of global memory when "
             "called without arguments (a no-op on the CPU).")
    register("system.set_ffts", [P("workspace", "tensor")], _set_ffts, unit="sync", reads=(),
             doc="Declare the FFTS workspace of explicit cross-core sync (a no-op on the CPU).")
    register("system.task_invalid", [], _task_id, unit="system",
             doc="The TaskId of no task (what `None` in deps= means).")
    register("system.task_dummy", [P("deps", "attr")], _task_dummy, unit="system",
             doc="A task that does nothing and completes once every TaskId in deps has: one "
             "TaskId standing for all of them (arrays of TaskIds are expanded, None skipped).")
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
