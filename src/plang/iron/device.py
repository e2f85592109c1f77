"""The IRON view of plang's chip: a grid of tiles over `plang.target.Device`, and `Tile`.

Column ``c`` is core group ``c``. Row 0 holds the shim tiles (host DMA: `fill` / `drain`),
row 1 the mem tiles (links: `split` / `join` / `forward`), rows 2 and up the compute tiles,
one per core of the group (``aic_per_cluster + aiv_per_cluster`` rows, 3 by default).
A compute tile's data memory is the chip's Vec buffer capacity; a mem tile's is its Mat one.
Limits the CPU chip does not have (DMA channels, buffer descriptors, locks) read as large
documented constants, so designs that size themselves from them still run.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from ..ir.enums import MemorySpace
from ..target import Device as Chip
from ..target import get_current_device

#: what the CPU chip reports for a limit it does not have
UNLIMITED = 1 << 16


class AIETileType(Enum):
    """The kinds of tile on the grid."""

    CoreTile = "CoreTile"
    MemTile = "MemTile"
    ShimNOCTile = "ShimNOCTile"


class Tile:
    """A tile: a place on the grid (``col``, ``row``), or a kind of tile placement picks."""

    def __init__(self, col: int | None = None, row: int | None = None, *,
                 tile_type: AIETileType | None = None) -> None:
        for name, v in (("col", col), ("row", row)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"Tile {name} must be a non-negative int or None, got {v!r}")
        if tile_type is not None and not isinstance(tile_type, AIETileType):
            raise TypeError(f"Tile tile_type must be an AIETileType, got {tile_type!r}")
        self.col, self.row, self._tile_type = col, row, tile_type

    @property
    def tile_type(self) -> AIETileType | None:
        return self._tile_type

    @property
    def placed(self) -> bool:
        return self.col is not None and self.row is not None

    def with_type(self, tile_type: AIETileType) -> Tile:
        return Tile(self.col, self.row, tile_type=tile_type)

    def copy(self) -> Tile:
        return Tile(self.col, self.row, tile_type=self._tile_type)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Tile) and (self.col, self.row, self._tile_type) == (
            other.col, other.row, other._tile_type)

    def __hash__(self) -> int:
        return hash((self.col, self.row, self._tile_type))

    def __repr__(self) -> str:
        kind = f", tile_type={self._tile_type.name}" if self._tile_type else ""
        return f"Tile({self.col}, {self.row}{kind})"


AnyComputeTile = Tile(tile_type=AIETileType.CoreTile)
AnyMemTile = Tile(tile_type=AIETileType.MemTile)
AnyShimTile = Tile(tile_type=AIETileType.ShimNOCTile)


class Device:
    """A device of the CPU chip: the tile grid over a `plang.target.Device` (default: the
    current one)."""

    arch = "cpu"
    can_dispatch_full_elf = False
    default_core_stack_bytes = 1024
    core_memory_banks = 1
    core_dma_channels_in = core_dma_channels_out = UNLIMITED
    shim_dma_channels_in = shim_dma_channels_out = UNLIMITED
    address_gen_granularity = 1
    max_lock_value = 2**31 - 1
    max_repeat_count = 0
    dma_task_queue_depth = 0

    def __init__(self, chip: Chip | None = None) -> None:
        if chip is None:
            chip = get_current_device()
        if isinstance(chip, Device):
            chip = chip.chip
        if not isinstance(chip, Chip):
            raise TypeError(f"Device takes a plang.target.Device, got {type(chip).__name__}")
        self.chip = chip

    @classmethod
    def of(cls, device: Any) -> Device:
        return device if isinstance(device, Device) else cls(device)

    @property
    def name(self) -> str:
        return self.chip.name

    @property
    def cols(self) -> int:
        return self.chip.clusters

    @property
    def core_rows(self) -> int:
        return self.chip.aic_per_cluster + self.chip.aiv_per_cluster

    @property
    def rows(self) -> int:
        return 2 + self.core_rows

    @property
    def core_memory_bytes(self) -> int:
        """Data memory of one compute tile (the chip's Vec buffer)."""
        return self.chip.capacity(MemorySpace.Vec)

    @property
    def core_memory_bank_bytes(self) -> int:
        return self.core_memory_bytes

    @property
    def mem_tile_memory_bytes(self) -> int:
        return self.chip.capacity(MemorySpace.Mat)

    def get_tile_type(self, col: int, row: int) -> AIETileType:
        self._check(col, row)
        if row == 0:
            return AIETileType.ShimNOCTile
        return AIETileType.MemTile if row == 1 else AIETileType.CoreTile

    def tiles(self, tile_type: AIETileType) -> list[Tile]:
        """Every tile of a kind, column by column."""
        rows = {AIETileType.ShimNOCTile: [0], AIETileType.MemTile: [1]}.get(
            tile_type, list(range(2, self.rows)))
        return [Tile(c, r, tile_type=tile_type) for c in range(self.cols) for r in rows]

    def memory_bytes(self, tile: Tile) -> int:
        kind = self.get_tile_type(tile.col, tile.row)
        if kind is AIETileType.CoreTile:
            return self.core_memory_bytes
        return self.mem_tile_memory_bytes if kind is AIETileType.MemTile else UNLIMITED * 1024

    def get_num_bds(self, tile_type: AIETileType) -> int:
        return UNLIMITED

    def get_dma_bd_wrap_bits(self) -> int:
        return 31

    def get_dma_bd_step_bits(self) -> int:
        return 31

    def get_dma_bd_iter_bits(self) -> int:
        return 31

    def dma_bd_fits(self, col: int, row: int, tap: Any, dtype: Any = None) -> bool:
        """Any pattern of at most 4 dimensions fits (the CPU chip has no descriptors)."""
        self._check(col, row)
        return len(tap.sizes) <= 4

    def _check(self, col: int, row: int) -> None:
        if not (0 <= col < self.cols and 0 <= row < self.rows):
            raise ValueError(f"tile ({col}, {row}) is outside device {self.name} "
                             f"({self.cols} columns x {self.rows} rows)")

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Device) and other.chip == self.chip

    def __hash__(self) -> int:
        return hash(self.chip)

    def __repr__(self) -> str:
        return f"iron.Device({self.name}: {self.cols} cols x {self.rows} rows)"
