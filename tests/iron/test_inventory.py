"""docs/iron.md's table covers exactly `plang.iron.__all__`, in four categories; every
hardware-only name raises UnsupportedConstructError naming itself when constructed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import plang.iron as iron
from plang.errors import UnsupportedConstructError
from plang.iron.unsupported import NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "iron.md"
CATEGORIES = ("emulated", "device limit", "accepted, no effect", "hardware-only")


def table() -> dict[str, str]:
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*`([A-Za-z_]\w*)`\s*\|\s*([^|]+?)\s*\|", line)
        if m and m.group(2) in CATEGORIES:
            rows[m.group(1)] = m.group(2)
    return rows


def test_table_covers_all_exactly():
    rows = table()
    assert sorted(rows) == sorted(iron.__all__), (
        f"missing: {sorted(set(iron.__all__) - set(rows))}, extra: {sorted(set(rows) - set(iron.__all__))}")


def test_hardware_only_names_are_the_unsupported_ones():
    hardware = sorted(n for n, c in table().items() if c == "hardware-only")
    assert hardware == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_constructing_a_hardware_only_name_raises(name):
    with pytest.raises(UnsupportedConstructError, match=name) as info:
        getattr(iron, name)()
    assert "ObjectFifo" in str(info.value)
