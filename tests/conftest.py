"""Suite-wide setup: every pass of every test (pipelines, standalone pass calls, `@pl.jit`
compiles in the main thread) runs under a `RoundTripInstrument`, so the printer contract
(`pl.parse(p.as_python())` equals `p`, printing is a fixpoint) is checked on all IR the
suite produces. `PLANG_TEST_ROUNDTRIP=0` turns it off (e.g. to time the suite without it).
`block_packs` records the matmul B tiles packed by block transposes."""

from __future__ import annotations

import os

import pytest

import plang as pl
from plang.passes import PassContext, RoundTripInstrument

ROUND_TRIP = RoundTripInstrument(pl.parse)


@pytest.fixture(autouse=True, scope="session")
def _round_trip_every_pass():
    if os.environ.get("PLANG_TEST_ROUNDTRIP", "1") == "0":
        yield
        return
    with PassContext(instruments=[ROUND_TRIP]):
        yield


@pytest.fixture
def block_packs(monkeypatch) -> list:
    """The tiles a matmul's B was packed from by block transposes
    (`lower_matmul._Operands._pack_transposed`), in order."""
    from plang.codegen.kernel import lower_matmul

    calls = []
    pack = lower_matmul._Operands._pack_transposed
    monkeypatch.setattr(lower_matmul._Operands, "_pack_transposed",
                        lambda self, src: (calls.append(src), pack(self, src)))
    return calls
