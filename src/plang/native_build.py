"""Building plang's own C sources with the system compiler, on first use.

A source is compiled once per content and flags into `native/` of the cache root
(`plang.cache_root`), else into this process's scratch folder (also when the root cannot be
written, e.g. read-only or full: warned once). The library's name is derived from the source
under the root's secret (nobody else can plant a file by that name); it is written through a
temp file and renamed into place (0700), and a `.seal` file beside it holds the HMAC of its
bytes: it is only handed out for loading while its bytes match, and rebuilt otherwise.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from . import cache_root
from .cache_root import Store


def build(source_path: Path, *, shared: bool = True, flags: tuple[str, ...] = ()) -> str:
    """Path of `source_path` compiled to a shared library (`shared`) or a position-independent
    object file; raises RuntimeError with the compiler's message when it fails."""
    identity = source_path.read_bytes() + repr((shared, flags)).encode()
    root = cache_root.root()
    if root is not None:
        try:
            return _build_in(root.sub("native"), source_path, identity, shared, flags)
        except OSError as e:  # read-only, full (a compile error is the source's: it propagates)
            reason = e.strerror or str(e).splitlines()[0]
            cache_root.warn_once("native", f"cannot build plang's runtime libraries under {root.path} "
                                           f"({reason}); building them in a temporary folder")
    return _build_in(cache_root.scratch().sub("native"), source_path, identity, shared, flags)


def _build_in(store: Store, source_path: Path, identity: bytes, shared: bool, flags: tuple[str, ...]) -> str:
    target = store.name(source_path.stem, identity, ".so" if shared else ".o")
    seal = target.with_name(target.name + ".seal")
    if _sealed(store, target, seal):
        return str(target)
    fd, tmp = tempfile.mkstemp(suffix=target.suffix, dir=store.path)
    os.close(fd)
    try:
        cmd = ["cc", "-O2", "-fPIC", *(["-shared"] if shared else ["-c"]), *flags, str(source_path),
               "-o", tmp]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"building {source_path.name} failed: {' '.join(cmd)}\n{result.stderr}")
        os.chmod(tmp, 0o700 if shared else 0o600)
        cache_root.write_atomic(seal, store.seal(Path(tmp).read_bytes()).encode())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(target)


def _sealed(store: Store, target: Path, seal: Path) -> bool:
    """Whether `target` exists and its bytes match the seal beside it."""
    try:
        return store.verify(target.read_bytes(), seal.read_text())
    except (OSError, UnicodeDecodeError):
        return False

