"""The on-disk JIT cache: compiled programs persisted so a new process skips compilation.

Layout: `<root>/<key-hash>/` holding `meta.json` (format version, plang version, the key, the
signature, the orchestration source, the kernel list) and one shared library per kernel.
Entries are keyed by the specialization (the kernel ISA level included), plang's version, a
hash of plang's own source (so a changed compiler never reuses old code) and the host CPU's
feature flags. They are written into a temporary folder and renamed into place (atomic); an
entry that is missing pieces, corrupt, or from another plang / format version is ignored (and
replaced by the next store).

Root: `$PLANG_CACHE_DIR`, else `$XDG_CACHE_HOME/plang`, else `~/.cache/plang`.
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

from ..target import host
from ..version import __version__

FORMAT_VERSION = 1


def cache_root() -> Path | None:
    if os.environ.get("PLANG_DISK_CACHE", "1") in ("0", "false", "off", "no"):
        return None
    root = os.environ.get("PLANG_CACHE_DIR")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plang"


def _machine_tag() -> str:
    """Kernels are built for an ISA level (in the key), but the C-interface wrapper LLVM adds
    around each one is built for the host: entries are only valid on a CPU with the same
    feature flags."""
    flags = " ".join(sorted(host.cpu_flags()))
    return f"{host.machine()}-{hashlib.sha256(flags.encode()).hexdigest()[:12]}"


@functools.lru_cache(maxsize=1)
def _code_tag() -> str:
    """Hash of plang's own source: an entry built by other compiler code is never reused."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".c") and path.is_file():
            digest.update(str(path.relative_to(package)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def entry_dir(key: tuple) -> Path | None:
    root = cache_root()
    if root is None:
        return None
    tag = (FORMAT_VERSION, __version__, _code_tag(), _machine_tag(), key)
    digest = hashlib.sha256(repr(tag).encode()).hexdigest()
    return root / digest[:32]


def load(key: tuple, restore: Callable[[Path, dict], Any]) -> Any | None:
    """The cached object for `key`, or None when absent or unusable."""
    path = entry_dir(key)
    if path is None or not (path / "meta.json").is_file():
        return None
    try:
        meta = json.loads((path / "meta.json").read_text())
        if meta.get("format") != FORMAT_VERSION or meta.get("plang") != __version__:
            return None
        return restore(path, meta)
    except Exception:  # a corrupt entry is a miss, never a crash
        return None


def store(key: tuple, write: Callable[[Path], dict]) -> None:
    """Persist an entry: `write(folder)` writes artifacts and returns the metadata dict."""
    path = entry_dir(key)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=path.parent))
    try:
        meta = write(tmp)
        meta.update(format=FORMAT_VERSION, plang=__version__)
        (tmp / "meta.json").write_text(json.dumps(meta))
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
        os.rename(tmp, path)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    _evict(path.parent, keep=path)


def _evict(root: Path, keep: Path) -> None:
    """Remove the least recently written entries beyond `$PLANG_CACHE_ENTRIES` (default 512)."""
    limit = int(os.environ.get("PLANG_CACHE_ENTRIES", "512"))
    entries = [p for p in root.iterdir() if (p / "meta.json").is_file() and p != keep]
    if len(entries) < limit:
        return
    entries.sort(key=lambda p: (p / "meta.json").stat().st_mtime)
    for old in entries[: len(entries) + 1 - limit]:
        shutil.rmtree(old, ignore_errors=True)
