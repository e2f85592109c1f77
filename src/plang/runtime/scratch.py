"""Kernel scratch: the per-thread buffers behind a kernel's large per-call buffers.

A kernel takes each buffer too large for its stack (a matmul's packed B panels) at entry
through `LaunchContext.scratch_acquire` and gives it back at exit through `scratch_release`
(`plang.codegen.kernel.abi`). These are ``native/scratch.c``'s functions: each thread keeps
the buffers it was given back, up to 8 of them and 32 MiB, so a kernel called again on that
thread reuses memory whose pages are already in, instead of malloc handing a MiB-sized
buffer back to the OS at every free and the next call faulting it in and zeroing it again.

C ABI::

    void *plang_scratch_acquire(int64_t bytes);  // 64-byte aligned; NULL: no memory
    void plang_scratch_release(void *p);         // NULL: nothing
    int64_t plang_scratch_kept(void);            // bytes the calling thread keeps
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from .pipes import lazy_native

_SOURCE = Path(__file__).parent / "native" / "scratch.c"
_vp, _i64 = ctypes.c_void_p, ctypes.c_int64
_SIGNATURES = {
    "plang_scratch_acquire": (_vp, [_i64]),
    "plang_scratch_release": (None, [_vp]),
    "plang_scratch_kept": (_i64, []),
}
library = lazy_native(_SOURCE, _SIGNATURES)


def addresses() -> tuple[int, int]:
    """Addresses of (`plang_scratch_acquire`, `plang_scratch_release`), for launch contexts."""
    lib = library()
    return (ctypes.cast(lib.plang_scratch_acquire, _vp).value,
            ctypes.cast(lib.plang_scratch_release, _vp).value)


def kept_bytes() -> int:
    """Bytes of scratch the calling thread keeps for its next kernels."""
    return library().plang_scratch_kept()
