"""System ops that only order hardware pipes or caches (`pl.system.sync_src`, `bar_*`, `fence`,
`cacheinvalid`, ...): nothing to emit, since a CPU core runs its ops in program order over
coherent memory. The `pl.prefetch` family only warms a cache: its handles are constant tokens
and `wait` is True."""

from __future__ import annotations

from typing import Any

from ...dtypes import BOOL, INT64
from ...ir.ops.system_ops import ORDERING_ONLY
from .mlir import arith, ir


def _nothing(lc: Any, short: str, args: dict) -> None:
    return None


def _token(lc: Any, short: str, args: dict) -> tuple:
    return (lc.kb.const(INT64, 0), INT64)


def _landed(lc: Any, short: str, args: dict) -> tuple:
    return (arith.constant(ir.IntegerType.get_signless(1), 1), BOOL)


def register(table: dict) -> None:
    for name in ORDERING_ONLY:
        table[f"system.{name}"] = _nothing
    for name in ("make_context", "async_prefetch", "session"):
        table[f"prefetch.{name}"] = _token
    table["prefetch.wait"] = _landed
