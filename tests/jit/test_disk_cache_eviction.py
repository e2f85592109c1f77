"""The disk cache keeps at most PLANG_CACHE_ENTRIES entries, dropping the oldest."""

import os
import time

from plang.jit import disk_cache


def test_oldest_entries_are_evicted(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PLANG_CACHE_ENTRIES", "3")
    keys = [("kernel", i) for i in range(5)]
    for i, key in enumerate(keys):
        disk_cache.store(key, lambda folder, i=i: {"i": i})
        os.utime(disk_cache.entry_dir(key) / "meta.json", (time.time() + i, time.time() + i))
    kept = [k for k in keys if disk_cache.load(k, lambda folder, meta: meta["i"]) is not None]
    assert kept == keys[2:]
