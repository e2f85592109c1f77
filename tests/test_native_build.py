"""plang's own C libraries: built private (0700) into the cache root, or into the process's
scratch folder with the disk cache off; a damaged or swapped one is rebuilt before it is
handed out for loading."""

from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

from plang import cache_root, native_build

PROBE_C = "int plang_probe(void) { return 7; }\n"


def _probe_source(tmp_path: Path) -> Path:
    source = tmp_path / "probe.c"
    source.write_text(PROBE_C)
    return source


def test_a_swapped_library_is_rebuilt_before_it_is_loaded(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))
    source = _probe_source(tmp_path)
    library = Path(native_build.build(source))
    assert library.parent == tmp_path / "cache" / "native"
    assert library.name != "probe.so" and oct(library.stat().st_mode & 0o777) == "0o700"
    library.write_bytes(library.read_bytes()[:100])  # truncated or replaced by someone
    assert Path(native_build.build(source)) == library
    assert ctypes.CDLL(str(library)).plang_probe() == 7


def test_with_the_disk_cache_off_libraries_go_to_the_scratch_folder(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PLANG_DISK_CACHE", "0")
    library = Path(native_build.build(_probe_source(tmp_path)))
    assert library.parent == cache_root.scratch().path / "native"
    assert library.is_relative_to(tempfile.gettempdir())
