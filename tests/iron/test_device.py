"""The IRON device view of plang's chip, tiles and device management."""

from __future__ import annotations

import pytest

import plang.iron as iron
from plang.iron import AIETileType, Device, Program, Runtime, Tile
from plang.target import Device as Chip


def test_grid_over_the_chip():
    dev = Device(Chip(clusters=3))
    assert (dev.cols, dev.rows, dev.core_rows) == (3, 5, 3)
    assert dev.get_tile_type(0, 0) is AIETileType.ShimNOCTile
    assert dev.get_tile_type(2, 1) is AIETileType.MemTile
    assert dev.get_tile_type(1, 4) is AIETileType.CoreTile
    assert len(dev.tiles(AIETileType.CoreTile)) == 9
    assert dev.core_memory_bytes == 192 * 1024 and dev.name == Chip(clusters=3).name
    with pytest.raises(ValueError, match="tile \\(3, 0\\) is outside device"):
        dev.get_tile_type(3, 0)
    assert dev.dma_bd_fits(0, 0, iron.TensorAccessPattern.full((4, 4)))
    assert dev.arch == "cpu" and not dev.can_dispatch_full_elf


def test_tiles():
    t = Tile(1, 2)
    assert t.copy() == t and t.with_type(AIETileType.CoreTile).tile_type is AIETileType.CoreTile
    assert iron.AnyComputeTile.tile_type is AIETileType.CoreTile and not iron.AnyMemTile.placed
    with pytest.raises(ValueError, match="Tile col must be a non-negative int"):
        Tile(-1, 0)


def test_current_device_management():
    chip = Chip(clusters=3)
    before = iron.get_current_device()
    with iron.set_current_device(chip):
        assert iron.get_current_device() is chip
    assert iron.get_current_device() == before


def test_program_needs_a_device():
    with pytest.raises(ValueError, match="Program requires a device, but none was selected"):
        Program(None, Runtime(lambda: None))


def test_resolved_design_lists_its_parts():
    from iron_designs import passthrough

    text = str(passthrough(256, 64))
    assert "worker copy_core at Tile(0, 2" in text and "fifo in: (64,) int32, depth 2" in text
