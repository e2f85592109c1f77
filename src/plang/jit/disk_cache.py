"""The on-disk JIT cache: compiled programs persisted so a new process skips compilation.

Layout: `<root>/<key-hash>/` (the root: `plang.cache_root`) holding one shared library and
JSON sidecar per kernel, and `meta.json`: the full key, the SHA-256 of every other file of
the entry, the program's data (signature, orchestration source, kernel list) and a seal, the
HMAC of all of it under the root's secret. An entry is used only when its seal, its key and
every file's hash match, checked before any of it is executed or `dlopen`ed; any other entry
(corrupt, truncated, swapped, foreign, of another key or shape) is a miss, rebuilt and
replaced. The key is the specialization (the kernel ISA level included), the format and
plang versions, a hash of plang's own source (a changed compiler never reuses old code) and
the host CPU's feature flags. Entries are written into a temporary folder and renamed into
place (atomic). A cache that cannot be written (read-only, full) is warned about once, and
the process runs on uncached.

`PLANG_DISK_CACHE=0` disables it; at most `$PLANG_CACHE_ENTRIES` entries (default 512) are
kept, the least recently written removed first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from .. import cache_root
from ..target import host
from ..version import __version__

FORMAT_VERSION = 2


def _machine_tag() -> str:
    """Kernels are built for an ISA level (in the key), but the C-interface wrapper LLVM adds
    around each one is built for the host: entries are only valid on a CPU with the same
    feature flags."""
    flags = " ".join(sorted(host.cpu_flags()))
    return f"{host.machine()}-{hashlib.sha256(flags.encode()).hexdigest()[:12]}"


@functools.lru_cache(maxsize=1)
def code_tag() -> str:
    """Hash of plang's own source: an entry built by other compiler code is never reused."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".c") and path.is_file():
            digest.update(str(path.relative_to(package)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _full_key(key: tuple) -> str:
    return repr((FORMAT_VERSION, __version__, code_tag(), _machine_tag(), key))


def _entry(root: cache_root.Store, full_key: str) -> Path:
    return root.path / hashlib.sha256(full_key.encode()).hexdigest()[:32]


def entry_dir(key: tuple) -> Path | None:
    """The folder of `key`'s entry (it may not exist), or None without a usable cache root."""
    root = cache_root.root()
    return None if root is None else _entry(root, _full_key(key))


def _canonical(meta: dict) -> bytes:
    return json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verified_data(root: cache_root.Store, folder: Path, full_key: str) -> dict | None:
    """The entry's data when its seal, key and file hashes all match, else None."""
    try:
        meta = json.loads((folder / "meta.json").read_bytes())
        seal = meta.pop("seal")
        if not root.verify(_canonical(meta), seal) or meta["key"] != full_key:
            return None
        if any(_sha256(folder / name) != digest for name, digest in meta["files"].items()):
            return None
        return meta["data"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def load(key: tuple, restore: Callable[[Path, dict], Any]) -> Any | None:
    """`restore(folder, data)` of `key`'s verified entry, or None when there is none."""
    root = cache_root.root()
    if root is None:
        return None
    full_key = _full_key(key)
    folder = _entry(root, full_key)
    data = _verified_data(root, folder, full_key)
    if data is None:
        return None
    try:
        return restore(folder, data)
    except Exception:  # noqa: BLE001 - an entry this process cannot load is a miss, never a crash
        return None


_unwritable: set[Path] = set()


def store(key: tuple, write: Callable[[Path], dict]) -> None:
    """Persist an entry: `write(folder)` writes its files and returns its data (JSON)."""
    root = cache_root.root()
    if root is None or root.path in _unwritable:
        return
    full_key = _full_key(key)
    path = _entry(root, full_key)
    tmp: Path | None = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root.path))
        data = write(tmp)
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        meta = {"key": full_key, "files": files, "data": data}
        meta["seal"] = root.seal(_canonical(meta))
        (tmp / "meta.json").write_bytes(_canonical(meta))
    except Exception as e:  # noqa: BLE001 - a cache that cannot be written never fails a call
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        _unwritable.add(root.path)
        cache_root.warn_once(f"write {root.path}", f"cannot write the disk cache under {root.path} "
                                                   f"({e}); running uncached")
        return
    shutil.rmtree(path, ignore_errors=True)
    try:
        os.rename(tmp, path)
    except OSError:  # another process has just put its entry there
        shutil.rmtree(tmp, ignore_errors=True)
        return
    _evict(root.path, keep=path)


def _evict(root: Path, keep: Path) -> None:
    """Remove the least recently written entries beyond `$PLANG_CACHE_ENTRIES` (default 512)."""
    limit = int(os.environ.get("PLANG_CACHE_ENTRIES", "512"))
    entries = [p for p in root.iterdir() if (p / "meta.json").is_file() and p != keep]
    if len(entries) < limit:
        return
    entries.sort(key=_written)
    for old in entries[: len(entries) + 1 - limit]:
        shutil.rmtree(old, ignore_errors=True)


def _written(entry: Path) -> float:
    """When `entry` was written; 0 when another process (a rank of the same program) has just
    evicted it."""
    try:
        return (entry / "meta.json").stat().st_mtime
    except FileNotFoundError:
        return 0.0
