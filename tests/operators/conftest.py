"""Every operator test runs with its own cache root (JIT and tuning caches), so a test never
reads what another session stored, and the tuning cache starts empty in memory."""

from __future__ import annotations

import pytest

from plang.operators import TUNING_CACHE


@pytest.fixture(autouse=True, scope="session")
def _session_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PLANG_CACHE_DIR", str(tmp_path_factory.mktemp("plang-cache")))
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _fresh_tuning_memory():
    TUNING_CACHE.clear()
    yield
    TUNING_CACHE.clear()
