"""The cache root: the one private folder plang keeps what it builds in, and how what it
reads back from there is trusted.

Root: `$PLANG_CACHE_DIR`, else `$XDG_CACHE_HOME/plang`, else `~/.cache/plang`; none when
`PLANG_DISK_CACHE=0`. It is created 0700 and used only while it is a folder owned by this
user that no other user can write (one of the user's own that others can only read is
tightened to 0700), below folders that only this user or root can change (or sticky ones,
like /tmp); otherwise plang warns once (`CacheWarning`) and runs uncached. The root
holds a random secret (`secret`, 0600): whatever plang reads back is checked against an
HMAC-SHA256 seal under it (`Store.seal`) before it is used or `dlopen`ed, so a planted,
swapped, truncated or corrupted file is never trusted, and file names derived from it
(`Store.name`) cannot be predicted by anyone else.

What plang must build even without a root (the runtime's C libraries, external kernels) goes
into `scratch()`: a private (0700) temporary folder of this process, removed at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import os
import shutil
import stat
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

SECRET = "secret"
_SECRET_BYTES = 32


class CacheWarning(UserWarning):
    """plang runs (partly) uncached: its cache folder is refused or cannot be written."""


_warned: set[str] = set()
_lock = threading.Lock()


def warn_once(kind: str, message: str) -> None:
    """Issue `message` as a `CacheWarning`, at most once per process for each `kind`."""
    with _lock:
        if kind in _warned:
            return
        _warned.add(kind)
    warnings.warn(f"plang: {message}", CacheWarning, stacklevel=3)


@dataclass(frozen=True)
class Store:
    """A private folder and the secret that seals what is written there."""

    path: Path
    secret: bytes

    def seal(self, data: bytes) -> str:
        """The HMAC-SHA256 of `data` under this store's secret (hex)."""
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()

    def verify(self, data: bytes, seal: object) -> bool:
        return isinstance(seal, str) and hmac.compare_digest(self.seal(data), seal)

    def name(self, stem: str, identity: bytes, suffix: str = "") -> Path:
        """A path in this store for `identity`, not predictable without the secret."""
        return self.path / f"{stem}-{self.seal(identity)[:24]}{suffix}"

    def sub(self, name: str) -> Store:
        """The sub-folder `name`, created 0700 (group / other access is removed)."""
        folder = self.path / name
        folder.mkdir(mode=0o700, exist_ok=True)
        _tighten(folder)
        return Store(folder, self.secret)


def enabled() -> bool:
    """False when `PLANG_DISK_CACHE` turns the disk cache off (0 / false / off / no)."""
    return os.environ.get("PLANG_DISK_CACHE", "1").strip().lower() not in ("0", "false", "off", "no")


def root_path() -> Path | None:
    """Where the root is (it may not exist yet), or None when the disk cache is off."""
    if not enabled():
        return None
    root = os.environ.get("PLANG_CACHE_DIR")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plang"


_roots: dict[Path, Store | None] = {}


def root() -> Store | None:
    """The checked cache root, or None (disk cache off, or the folder refused: warned once)."""
    path = root_path()
    if path is None:
        return None
    with _lock:
        if path in _roots:
            store = _roots[path]
            if store is None or store.path.is_dir():
                return store
    refusal, store = _open_root(path)
    if refusal:
        warn_once(f"root {path}", f"not using the cache folder {path}: {refusal}; running uncached "
                                  f"(set PLANG_CACHE_DIR to a private folder, or PLANG_DISK_CACHE=0)")
    with _lock:
        _roots[path] = store
    return store


def _open_root(path: Path) -> tuple[str, Store | None]:
    """(why `path` is refused, or "", and its Store when it is not)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as e:
        return f"it cannot be created ({e.strerror})", None
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder", None
    if st.st_uid != os.geteuid():
        return f"it belongs to another user (uid {st.st_uid})", None
    if st.st_mode & 0o022:
        return "other users can write to it", None
    real = path.resolve()  # a symbolic link swapped later does not move it
    for folder in real.parents:
        st = folder.stat()
        if st.st_uid not in (0, os.geteuid()) or st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX:
            return f"other users can move or replace it ({folder} is theirs, or open to all)", None
    _tighten(real)
    try:
        return "", Store(real, _secret(real))
    except OSError as e:
        return f"its secret cannot be read or written ({e.strerror or e})", None


def _tighten(folder: Path) -> None:
    """Remove group / other access to `folder` (best effort: it may be on a read-only mount)."""
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(folder.stat().st_mode)
        if mode & 0o077:
            folder.chmod(mode & 0o700)


def _read_secret(path: Path) -> bytes | None:
    try:
        st = path.lstat()
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077
                or st.st_size != _SECRET_BYTES):
            return None
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _secret(root: Path) -> bytes:
    """The root's secret, created (0600) when missing; a bad one is replaced (voiding every
    seal under it: the entries are rebuilt)."""
    path = root / SECRET
    current = _read_secret(path)
    if current is not None:
        return current
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(_SECRET_BYTES))
        if os.path.lexists(path):
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # never over a secret another process has just created
            except FileExistsError:
                pass
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    current = _read_secret(path)
    if current is None:
        raise OSError(f"{path} is not a private {_SECRET_BYTES}-byte file")
    return current


def write_atomic(path: Path, data: bytes) -> None:
    """Write `path` through a temp file beside it, renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_scratch: list[Store] = []


def scratch() -> Store:
    """This process's private temporary folder (0700, under the system temp folder), removed
    at exit; its secret lives in memory only."""
    with _lock:
        if not _scratch:
            folder = Path(tempfile.mkdtemp(prefix="plang-"))
            _scratch.append(Store(folder, os.urandom(_SECRET_BYTES)))
            atexit.register(_remove_scratch, folder, os.getpid())
        return _scratch[0]


def _remove_scratch(folder: Path, owner: int) -> None:
    if os.getpid() == owner:  # not from a forked child
        shutil.rmtree(folder, ignore_errors=True)
