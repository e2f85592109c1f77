"""Building plang's own C sources with the system compiler, on first use.

A source is compiled once per content and flags into the plang cache directory
(`$PLANG_CACHE_DIR`, else `~/.cache/plang`, under `native/`), written through a temp file
and renamed into place, so concurrent processes never see a half-written library.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    root = os.environ.get("PLANG_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "plang")
    return Path(root) / "native"


def build(source_path: Path, *, shared: bool = True, flags: tuple[str, ...] = ()) -> str:
    """Path of `source_path` compiled to a shared library (`shared`) or a position-independent
    object file; raises RuntimeError with the compiler's message when it fails."""
    source = source_path.read_bytes()
    digest = hashlib.sha256(source + repr((shared, flags)).encode()).hexdigest()[:16]
    target = cache_dir() / f"{source_path.stem}-{digest}{'.so' if shared else '.o'}"
    if target.exists():
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=target.suffix, dir=target.parent)
    os.close(fd)
    cmd = ["cc", "-O2", "-fPIC", *(["-shared"] if shared else ["-c"]), *flags, str(source_path), "-o", tmp]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        os.unlink(tmp)
        raise RuntimeError(f"building {source_path.name} failed: {' '.join(cmd)}\n{result.stderr}")
    os.replace(tmp, target)
    return str(target)
