"""What the disk cache trusts (docs/runtime.md "What the cache trusts"): every entry and
runtime library is sealed and checked before use, so swapped, poisoned, truncated, foreign
or other-shape entries are rebuilt, never run; a root others can write is refused; a
read-only cache runs uncached with one warning."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plang.cache_root import CacheWarning
from plang.jit import disk_cache

HERE = Path(__file__).resolve().parent
SCRIPT = f'''
import sys, warnings
warnings.simplefilter("always")
import torch
sys.path.insert(0, {str(HERE)!r})
import jit_kernels as K
from plang.jit.compiler import COUNTERS

EXPECTED = {{"add": lambda a, b: a + b, "fused_bias_relu": lambda a, b: torch.relu(a + b)}}
for item in sys.argv[1:]:
    name, rows = item.split(":")
    a, b, c = torch.randn(int(rows), 64), torch.randn(int(rows), 64), torch.zeros(int(rows), 64)
    getattr(K, name)(a, b, c)
    assert torch.equal(c[:32], EXPECTED[name](a, b)[:32])  # exact (assert_close would import DTensor)
print("COUNTERS", COUNTERS["compiles"], COUNTERS["disk_hits"])
'''

PLANTED_C = r'''
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen(SENTINEL, "w");
    if (f) { fputs("planted code ran", f); fclose(f); }
}
void _mlir__mlir_ciface_add_tile(void **args) { (void)args; }
'''


def _run(tmp_path: Path, *items: str, cache: Path | None = None, **env: str) -> tuple[int, int, str]:
    """(compiles, disk hits, stderr) of a new process running `items` ("add:32": `K.add` on 32
    rows, its result checked)."""
    script = tmp_path / "kernels.py"
    script.write_text(SCRIPT)
    full_env = {**os.environ, **env}
    if cache is not None:
        full_env["PLANG_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, str(script), *items], capture_output=True, text=True,
                          timeout=300, env=full_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("COUNTERS"))
    compiles, hits = map(int, line.split()[1:])
    return compiles, hits, done.stderr


def _counts(tmp_path: Path, cache: Path, *items: str) -> tuple[int, int]:
    compiles, hits, err = _run(tmp_path, *items, cache=cache)
    assert "CacheWarning" not in err
    return compiles, hits


def _entries(cache: Path) -> dict[tuple[str, int], Path]:
    """(kernel, rows) -> its entry folder."""
    found = {}
    for meta in cache.glob("*/meta.json"):
        data = json.loads(meta.read_text())["data"]
        found[data["entry"], data["signature"][0][2][0]] = meta.parent
    return found


def _planted_library(tmp_path: Path, sentinel: Path) -> bytes:
    """A shared library whose constructor writes `sentinel` when it is loaded."""
    source = tmp_path / "planted.c"
    source.write_text(PLANTED_C)
    lib = tmp_path / "planted.so"
    subprocess.run(["cc", "-shared", "-fPIC", f'-DSENTINEL="{sentinel}"', str(source), "-o", str(lib)],
                   check=True)
    return lib.read_bytes()


@pytest.mark.slow
def test_swapped_poisoned_truncated_and_foreign_entries_are_rebuilt(tmp_path: Path):
    cache, sentinel = tmp_path / "cache", tmp_path / "planted-code-ran"
    planted = _planted_library(tmp_path, sentinel)
    assert _counts(tmp_path, cache, "add:32", "fused_bias_relu:32") == (2, 0)

    # runtime libraries replaced (their seals kept) and planted under predictable names
    native = cache / "native"
    assert oct(native.stat().st_mode & 0o777) == "0o700"
    for lib in list(native.glob("*.so")):
        lib.write_bytes(planted)
        (native / (lib.name.rsplit("-", 1)[0] + "-0123456789abcdef.so")).write_bytes(planted)
    assert _counts(tmp_path, cache, "add:32", "fused_bias_relu:32") == (0, 2)
    assert not sentinel.exists()

    entries = _entries(cache)  # swapped entries (same signature): each holds the other's key
    add, relu = entries["add", 32], entries["fused_bias_relu", 32]
    add.rename(tmp_path / "swap")
    relu.rename(add)
    (tmp_path / "swap").rename(relu)
    assert _counts(tmp_path, cache, "add:32", "fused_bias_relu:32") == (2, 0)  # results checked
    assert _counts(tmp_path, cache, "add:32", "fused_bias_relu:32") == (0, 2)  # repaired

    add = _entries(cache)["add", 32]
    meta = json.loads((add / "meta.json").read_text())
    meta["data"]["orchestration"] += f"\nopen({str(sentinel)!r}, 'w').write('cached text ran')\n"
    (add / "meta.json").write_text(json.dumps(meta))
    assert _counts(tmp_path, cache, "add:32") == (1, 0)
    assert not sentinel.exists()  # the orchestration text was never executed

    kernel = _entries(cache)["add", 32] / "add_tile"
    kernel.write_bytes(planted)
    assert _counts(tmp_path, cache, "add:32") == (1, 0)
    assert not sentinel.exists()  # the swapped library was never dlopen'ed

    kernel = _entries(cache)["add", 32] / "add_tile"
    kernel.write_bytes(kernel.read_bytes()[: kernel.stat().st_size // 2])
    assert _counts(tmp_path, cache, "add:32") == (1, 0)  # truncated: rebuilt (it used to SIGBUS)

    assert _counts(tmp_path, cache, "add:64") == (1, 0)
    entries = _entries(cache)
    other_shape = entries["add", 64]
    shutil.rmtree(other_shape)
    shutil.copytree(entries["add", 32], other_shape)
    assert _counts(tmp_path, cache, "add:64") == (1, 0)  # an entry of another shape: not reused
    assert _counts(tmp_path, cache, "add:64") == (0, 1)  # and repaired


def _foreign_owner(tmp_path: Path) -> Path:
    """A folder owned by another user (made with chown when running as root)."""
    if os.geteuid() != 0:
        return Path("/")
    folder = tmp_path / "foreign"
    shutil.copytree(tmp_path / "cache", folder)
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("case", ["others can write", "another user", "a folder above is open"])
def test_a_cache_root_others_control_is_refused(tmp_path: Path, case: str):
    cache = tmp_path / "cache"
    assert _counts(tmp_path, cache, "add:32") == (1, 0)
    if case == "others can write":
        cache.chmod(0o777)
        root, reason = cache, "other users can write to it"
    elif case == "a folder above is open":
        (tmp_path / "open").mkdir(mode=0o777)
        (tmp_path / "open").chmod(0o777)  # not sticky: anyone could swap the cache folder
        root, reason = tmp_path / "open" / "cache", "other users can move or replace it"
        shutil.copytree(cache, root)
    else:
        root, reason = _foreign_owner(tmp_path), "it belongs to another user"
    before = sorted(root.rglob("*")) if root != Path("/") else None
    compiles, hits, err = _run(tmp_path, "add:32", cache=root)
    assert (compiles, hits) == (1, 0)  # its entries are not used
    assert err.count("CacheWarning") == 1 and reason in err, err
    if before is not None:
        assert sorted(root.rglob("*")) == before  # nor written to


def test_a_full_cache_warns_once_and_runs_uncached(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))

    def disk_full(folder: Path) -> dict:
        (folder / "kernel").write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.warns(CacheWarning, match="No space left on device") as record:
        disk_cache.store(("kernel", 1), disk_full)
        disk_cache.store(("kernel", 2), lambda folder: {"i": 2})  # not tried again
    assert len(record) == 1
    assert disk_cache.load(("kernel", 2), lambda folder, data: data) is None
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["secret"]  # nothing half-written


def _make_read_only(folders: list[Path]) -> list[str] | None:
    """Make `folders` read-only for this user: the command that undoes it, or None."""
    for folder in folders:
        folder.chmod(0o555)
    if not os.access(folders[0], os.W_OK):
        return []
    for folder in folders:
        folder.chmod(0o700)
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", *map(str, folders)]).returncode == 0:
        return ["chattr", "-i", *map(str, folders)]
    return None


@pytest.mark.slow
def test_a_read_only_cache_runs_uncached_with_one_warning(tmp_path: Path):
    cache = tmp_path / "cache"
    assert _counts(tmp_path, cache, "add:32") == (1, 0)
    folders = [cache, cache / "native"]
    undo = _make_read_only(folders)
    if undo is None:
        pytest.skip("cannot make a folder read-only for this user here")
    try:
        compiles, hits, err = _run(tmp_path, "add:32", "add:64", "fused_bias_relu:32", cache=cache)
    finally:
        if undo:
            subprocess.run(undo, check=True)
        for folder in folders:
            folder.chmod(0o700)
    assert (compiles, hits) == (2, 1)  # what is there is used; the rest runs uncached
    assert err.count("CacheWarning") == 1 and "cannot write the disk cache" in err, err


def _isolated_env(tmp_path: Path) -> dict[str, str]:
    folders = {name: tmp_path / name for name in ("home", "xdg", "tmp")}
    for folder in folders.values():
        folder.mkdir()
    return {"HOME": str(folders["home"]), "XDG_CACHE_HOME": str(folders["xdg"]),
            "TMPDIR": str(folders["tmp"])}


@pytest.mark.slow
def test_xdg_cache_home_holds_everything_plang_keeps(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("PLANG_CACHE_DIR", raising=False)
    env = _isolated_env(tmp_path)
    assert _run(tmp_path, "add:32", **env)[:2] == (1, 0)
    root = Path(env["XDG_CACHE_HOME"]) / "plang"
    assert {p.name for p in root.iterdir()} >= {"native", "secret"}
    assert [oct(p.stat().st_mode & 0o777) for p in (root, root / "native")] == ["0o700", "0o700"]
    assert oct((root / "secret").stat().st_mode & 0o777) == "0o600"
    assert list(Path(env["HOME"]).iterdir()) == []
    assert list(Path(env["TMPDIR"]).iterdir()) == []


EXTERNAL = '''
import os, sys, torch
import plang as pl

T = "pl.Tensor[[8], pl.FP32]"
PROGRAM = f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, external_source={sys.argv[1]!r})
    def ones(self, out: pl.Out[{T}]) -> {T}:
        ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[{T}]) -> {T}:
        out = self.ones(out)
        return out
"""
for _ in range(2):
    out = torch.zeros(8)
    pl.compile(pl.parse(PROGRAM))(out)
    assert out.tolist() == [1.0] * 8
    left = [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("plang-ext-")]
    assert not left, left
'''

ONES_C = r'''#include "plang_kernel.h"
void ones(void **args) {
  plang_memref *o = PLANG_TENSOR_ARG(args, 0);
  for (int64_t i = 0; i < PLANG_SIZE(o, 1, 0); i++) PLANG_DATA(float, o)[i] = 1.0f;
}
'''


@pytest.mark.slow
def test_with_the_disk_cache_off_nothing_outlives_the_process(tmp_path: Path):
    env = {**_isolated_env(tmp_path), "PLANG_DISK_CACHE": "0"}
    assert _run(tmp_path, "add:32", **env)[:2] == (1, 0)
    source = tmp_path / "ones.c"
    source.write_text(ONES_C)
    script = tmp_path / "external.py"
    script.write_text(EXTERNAL)
    done = subprocess.run([sys.executable, str(script), str(source)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("home", "xdg", "tmp"):
        assert list((tmp_path / name).iterdir()) == [], name
