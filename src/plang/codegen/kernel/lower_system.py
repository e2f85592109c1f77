"""System ops that only order hardware pipes or caches (`pl.system.sync_src`, `bar_*`, `fence`,
`cacheinvalid`, ...): nothing to emit, since a CPU core runs its ops in program order over
coherent memory. The `pl.prefetch` family only warms a cache: its handles are constant tokens
and `wait` is True. `pl.system.syncall` is a call of the runtime's barrier through the launch
context (`abi.py`, *Barriers*)."""

from __future__ import annotations

from typing import Any

from ... import ir as pir
from ...dtypes import BOOL, INT64
from ...ir.ops.system_ops import ORDERING_ONLY, syncall_form
from .abi import CONTEXT_FIELDS, SYNC_CALLER_AIC, SYNC_CORE_TYPES, SYNC_SOFT, SyncSite
from .checks import cancel_pointer
from .context import LowerContext, field_address
from .mlir import arith, ir, llvm, memref


def _nothing(lc: Any, short: str, args: dict) -> None:
    return None


def _token(lc: Any, short: str, args: dict) -> tuple:
    return (lc.kb.const(INT64, 0), INT64)


def _landed(lc: Any, short: str, args: dict) -> tuple:
    return (arith.constant(ir.IntegerType.get_signless(1), 1), BOOL)


def _syncall(lc: LowerContext, short: str, a: dict) -> None:
    call = lc.call
    mode, core_type = syncall_form(call.kwargs)
    core = "AIC" if lc.function.func_type is pir.FunctionType.AIC else "AIV"
    lc.syncall_sites.append(SyncSite(mode, core_type, core, call.span.fields if call.span.is_known else ()))
    i64, ptr = ir.IntegerType.get_signless(64), ir.Type.parse("!llvm.ptr")
    kind = SYNC_CORE_TYPES.index(core_type) + (SYNC_CALLER_AIC if core == "AIC" else 0)
    if mode == "soft":
        ws = lc.ddr(a["gm_workspace"])
        offset = memref.extract_strided_metadata(ws.memref)[1]
        address = arith.addi(memref.extract_aligned_pointer_as_index(ws.memref),
                             arith.muli(offset, lc.kb.idx(ws.type.dtype.itemsize)))
        workspace = llvm.inttoptr(ptr, arith.index_cast(i64, address))
        used = arith.index_cast(i64, lc.index(a["used_cores"]))
        kind += SYNC_SOFT
    else:
        workspace, used = llvm.mlir_zero(ptr), arith.constant(i64, 0)
    fn = lc.context_pointer(CONTEXT_FIELDS.index("syncall"))
    operands = [lc.context_pointer(CONTEXT_FIELDS.index("barrier")), cancel_pointer(lc),
                field_address(lc.ctx_ptr, CONTEXT_FIELDS.index("status")),
                arith.constant(i64, len(lc.syncall_sites) - 1), arith.constant(i64, kind), workspace, used]
    llvm.call(ir.IntegerType.get_signless(32), [fn, *operands], [], [])  # failures set the cancel word
    return None


def register(table: dict) -> None:
    for name in ORDERING_ONLY:
        table[f"system.{name}"] = _nothing
    for name in ("make_context", "async_prefetch", "session"):
        table[f"prefetch.{name}"] = _token
    table["prefetch.wait"] = _landed
    table["system.syncall"] = _syncall
