"""Native code handles that need no MLIR: packed entry points, shared libraries, errors.

A compiled kernel is called through its packed entry point `plang_entry_<fn>(void **args)`
(see `abi.py`) as a ctypes function, so the GIL is released while native code runs.
This module links object files into shared libraries with the system `cc -shared` and
`dlopen`s them; it imports nothing heavy, so a process that only loads persisted kernels
(the JIT's disk cache) never imports the MLIR bindings.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ... import native_build
from ...backend.pto_backend import PartialCodegenError

__all__ = ["KernelCompileError", "NativeFunction", "packed_symbol", "link_shared_object",
           "load_shared_object", "atomic_target", "helper_library", "helper_object"]

_HELPERS = Path(__file__).parent / "native_src" / "conversions.c"


class KernelCompileError(PartialCodegenError):
    """A kernel could not be built, verified, lowered, JIT-compiled, linked or loaded (the
    reference's `PartialCodegenError`, so a handler written for it catches this)."""


def packed_symbol(fn_name: str) -> str:
    """Exported symbol of the packed (`void**`) entry point of function `fn_name`."""
    return f"plang_entry_{fn_name}"


PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
"""ctypes type of a packed entry point."""


@dataclass
class NativeFunction:
    """A callable packed entry point; `owner` keeps the engine or shared library alive."""

    fn_name: str
    entry: ctypes._CFuncPtr
    owner: object

    def __call__(self, packed_args: ctypes.Array) -> None:
        self.entry(ctypes.addressof(packed_args))


def atomic_target(path: str) -> str:
    """A fresh temp file next to `path`, to be renamed onto it once written."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=os.path.basename(path))
    os.close(fd)
    return tmp


def helper_library() -> str:
    """The shared library of the helpers kernels may call (FP16 / BF16 conversions that LLVM
    emits as calls on targets without the instructions); every JIT session loads it."""
    return _build_helpers(shared=True)


def helper_object() -> str:
    """The same helpers as a hidden-visibility object, linked into every persisted kernel."""
    return _build_helpers(shared=False)


@functools.cache
def _build_helpers(shared: bool) -> str:
    try:
        return native_build.build(_HELPERS, shared=shared, flags=() if shared else ("-fvisibility=hidden",))
    except RuntimeError as e:
        raise KernelCompileError(str(e)) from None


def link_shared_object(objects: list[str], path: str, what: str) -> None:
    """Link object files (and the kernel helpers) into `path`, atomically: with the system
    linker `ld` directly where there is one (half the time of the `cc` driver: ~7 vs ~13 ms a
    kernel), else `cc -shared`. `-Bsymbolic`: the library's calls of its own functions bind
    inside it (a kernel named `exp` must not resolve to libm's)."""
    tmp = atomic_target(path)
    inputs = [*objects, helper_object(), "-lm"]
    commands = [["cc", "-shared", "-Wl,-Bsymbolic", "-o", tmp, *inputs]]
    if _LINKER:
        commands.insert(0, [_LINKER, "-shared", "-Bsymbolic", "-o", tmp, *inputs])
    try:
        for cmd in commands:
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode == 0:
                os.replace(tmp, path)
                return
        raise KernelCompileError(f"{what}: linking {path} failed: {res.stderr.strip()}")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_LINKER = shutil.which("ld") if sys.platform.startswith("linux") else None


def load_shared_object(path: str, fn_name: str) -> NativeFunction:
    """`dlopen` a persisted kernel and return its packed entry point."""
    lib = ctypes.CDLL(os.path.abspath(path))
    try:
        entry = getattr(lib, packed_symbol(fn_name))
    except AttributeError:
        raise KernelCompileError(f"{path}: no kernel entry {packed_symbol(fn_name)}") from None
    return NativeFunction(fn_name, PACKED(ctypes.cast(entry, ctypes.c_void_p).value), lib)
