"""The on-disk JIT cache: reuse in a new process, and corrupt / foreign entries rebuilt."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = f"""
import sys, torch
sys.path.insert(0, {str(HERE)!r})
import jit_kernels as K
from plang.jit.compiler import COUNTERS
a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
K.add(a, b, c)
assert torch.equal(c, a + b)  # exact; torch.testing.assert_close's first call imports DTensor (1.7 s)
print("COUNTERS", COUNTERS["compiles"], COUNTERS["disk_hits"])
assert not COUNTERS["disk_hits"] or "torch_mlir" not in sys.modules, "a disk-cache hit imported MLIR"
assert "ml_dtypes" not in sys.modules, "an fp32 program imported ml_dtypes (1.3 s; imported on first use)"
"""


def _run(cache: Path, **env) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PLANG_CACHE_DIR": str(cache), **env})
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("COUNTERS"))
    compiles, hits = map(int, line.split()[1:])
    return compiles, hits


def _entries(cache: Path) -> list[Path]:
    return [p for p in cache.iterdir() if (p / "meta.json").exists()]


@pytest.mark.slow
def test_new_process_reuses_the_disk_cache_and_survives_corruption(tmp_path: Path):
    cache = tmp_path / "cache"
    assert _run(cache) == (1, 0)
    assert _run(cache) == (0, 1)  # a new process did not compile
    [entry] = _entries(cache)

    (entry / "meta.json").write_text("{ not json")
    assert _run(cache) == (1, 0)  # corrupt: rebuilt, not crashed
    assert _run(cache) == (0, 1)

    [entry] = _entries(cache)
    for lib in entry.iterdir():
        if lib.suffix == "" and lib.is_file():
            lib.write_bytes(b"garbage")
    assert _run(cache) == (1, 0)  # unloadable kernel library: rebuilt

    [entry] = _entries(cache)
    meta = json.loads((entry / "meta.json").read_text())
    meta["plang"] = "0.0.0-other"
    (entry / "meta.json").write_text(json.dumps(meta))
    assert _run(cache) == (1, 0)  # another plang version: ignored

    assert _run(cache, PLANG_DISK_CACHE="0") == (1, 0)  # disabled
