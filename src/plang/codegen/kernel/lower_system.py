"""System ops that only order hardware pipes or caches (`pl.system.sync_src`, `bar_*`, `fence`,
`cacheinvalid`, ...): nothing to emit, since a CPU core runs its ops in program order over
coherent memory."""

from __future__ import annotations

from typing import Any

from ...ir.ops.system_ops import ORDERING_ONLY


def _nothing(lc: Any, short: str, args: dict) -> None:
    return None


def register(table: dict) -> None:
    for name in ORDERING_ONLY:
        table[f"system.{name}"] = _nothing
