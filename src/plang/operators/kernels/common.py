"""What the row-wise operators (softmax, the norms) share: how a device splits M rows into
`blocks` SPMD blocks walked `rows` rows at a time, and the check that a split fits
(`RowBlocks`, a mixin giving an operator its `resolve` and `compatible`)."""

from __future__ import annotations

from typing import Any

from ...ir.enums import MemorySpace
from ...target import Device, get_current_device
from ..operator import Unresolvable

ROWS = (1, 2, 4, 8, 16, 32, 64)
"""The tuner's row-step domain. The one- and two-row steps keep a LayerNorm's live tiles of
1024 fp32 columns in a 48 KiB L1 (4096x1024 on a Zen 5 VM, medians of 9 rounds: rows=2
0.89 ms, rows=4 1.10 ms, torch 1.04 ms)."""
BLOCKS = (1, 2, 4, 8)  # the tuner's SPMD block domain
_PICKS = (64, 32, 16, 8, 4, 2, 1)  # what resolve() tries, most rows first


def tile_bytes(rows: int, cols: int, itemsize: int, live: int) -> int:
    """Vector-buffer bytes `live` [rows, cols] tiles of `itemsize` bytes take at once."""
    return live * rows * cols * itemsize


def split_rows(op: Any, dev: Device, live: int, itemsize: int = 4) -> dict[str, int]:
    """``rows`` / ``blocks`` for an [M, N] row-wise operator on `dev` (what the caller gave is
    kept): as many blocks as core groups that divide M, then the most rows (up to 64) per
    step that divide a block's share and fit `live` tiles in the vector buffer."""
    budget = dev.capacity(MemorySpace.Vec)
    blocks = op.blocks or next(b for b in range(min(dev.clusters, op.M), 0, -1) if op.M % b == 0)
    share = op.M // blocks
    rows = op.rows or next((r for r in _PICKS if share % r == 0
                            and tile_bytes(r, op.N, itemsize, live) <= budget), None)
    if rows is None:
        raise Unresolvable(f"{type(op).__name__}: no row block of {op.N} columns fits the "
                           f"{budget // 1024} KiB vector buffer of {dev.name}")
    return {"rows": rows, "blocks": blocks}


def check_rows(op: Any, live: int, itemsize: int = 4) -> None:
    """`ValueError` unless ``rows * blocks`` divides M and `live` row tiles fit the vector
    buffer of the current device."""
    if op.M % (op.rows * op.blocks):
        raise ValueError(f"{type(op).__name__}: M={op.M} is not a multiple of "
                         f"rows*blocks={op.rows}*{op.blocks}")
    need, have = tile_bytes(op.rows, op.N, itemsize, live), get_current_device().capacity(MemorySpace.Vec)
    if need > have:
        raise ValueError(f"{type(op).__name__}: rows={op.rows} needs {need // 1024} KiB of tiles, "
                         f"the vector buffer holds {have // 1024} KiB")


class RowBlocks:
    """`resolve` / `compatible` of an [M, N] fp32 row-wise operator whose kernel keeps
    `live_tiles` [rows, N] tiles at once (mix it in before the operator base)."""

    live_tiles = 3

    def resolve(self, dev):
        return self.replace(**split_rows(self, dev, live=self.live_tiles))

    def compatible(self):
        check_rows(self, live=self.live_tiles)
