"""Cross-core pipes: bounded ring buffers between the AIC and AIV kernels of a Group.

Every Group instance (one per Group task, per SPMD block) gets a fresh `PipeSet`; its
member kernels receive the set's handle as ``pipes=`` and open pipes by id. The ring
buffers live in a small C library (``native/pipes.c``, compiled with ``cc`` at first use
and cached), so native kernels and Python kernels share one implementation; every blocking
call releases the GIL.

C ABI (all symbols exported by `library_path()`; addresses from `symbol_addresses()`)::

    void* plang_pipeset_create(double timeout_s, int64_t slots);
        // the pipes of one Group instance; `slots` is the Group's ring depth
        // (pl.cross_core_slot(slot_num=N), default 2).
    void* plang_pipeset_get(void* set, int64_t pipe_id, int64_t slot_bytes, int64_t slots);
        // the pipe `pipe_id` of this Group instance, created on first use; slots <= 0 means
        // the set's depth. Both ends must pass the same slot_bytes / slots; NULL on a mismatch.
    int plang_pipe_push(void* pipe, const void* src, int64_t nbytes);
        // copy nbytes (<= slot_bytes) into the next free slot; blocks while all slots are
        // pushed-and-not-freed.
    int plang_pipe_pop(void* pipe, void* dst, int64_t nbytes);
        // copy the oldest unpopped slot into dst; blocks while none is pushed. The slot
        // stays owned by the consumer until plang_pipe_free.
    int plang_pipe_pop_ref(void* pipe, void** slot);
        // zero-copy pop: *slot points into the ring, valid until the matching free.
    int plang_pipe_free(void* pipe);
        // release the oldest popped slot back to the producer.
    void plang_pipeset_fail(void* set, int status, int64_t pipe_id, int op);
        // record a failure seen outside the rings (first one wins) and abort the set.
    int plang_pipe_reserve_ref(void* pipe, void** slot);
        // zero-copy push: *slot is the next free slot (blocks while none is), owned by the
        // producer until plang_pipe_commit publishes it (several may be held; in order).
    int plang_pipe_commit(void* pipe);
    int plang_pipe_push_many(void* pipe, const void* src, int64_t count, int64_t nbytes);
    int plang_pipe_pop_many(void* pipe, void* dst, int64_t count, int64_t nbytes);
        // `count` back-to-back objects pushed / popped-and-freed in one call.
    void plang_pipeset_close(void* set);
        // end of run: every unsatisfied wait returns 6 (closed), which is not a failure.
    int plang_pipe_try_reserve_ref(void* pipe, void** slot);
    int plang_pipe_try_pop_ref(void* pipe, void** slot);
        // never block: 7 (would block) where the plain call would wait.

Return codes: 0 ok, 1 timeout (deadlock: a wait exceeded the set's timeout), 2 aborted
(another member of the Group failed), 3 bad size, 4 free without a matching pop, 5 the two
ends opened a pipe with different slot sizes (recorded by the kernel adapter), 6 closed (the
run ended: `PipeSet.end_run`; never recorded as a failure). The set
records its first failure only: `plang_pipeset_abort` (a member raised its own error) counts
as one, and a free whose pop was aborted returns 2 without recording anything, so the
member's real error is the one reported. A kernel that sees a
nonzero code should return early; the runtime reads the set's status after the Group and
raises `PipeError` naming the pipe and operation, even if the kernel ignored the code.
Each pipe has one producer and one consumer (the codegen gives each direction and AIV
lane its own pipe id, e.g. ``2 * crossing + lane``).
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from .. import native_build
from ..errors import Error

DEFAULT_SLOTS = 2
STATUS = {0: "ok", 1: "timed out (deadlock?)", 2: "aborted", 3: "bad size", 4: "without a matching pop",
          5: "failed: the two ends opened it with different slot sizes", 6: "closed (end of run)"}
OPS = {1: "push", 2: "pop", 3: "free", 4: "open", 5: "reserve", 6: "commit"}
CLOSED, WOULD_BLOCK = 6, 7

_SOURCE = Path(__file__).parent / "native" / "pipes.c"

_vp, _i64 = ctypes.c_void_p, ctypes.c_int64
_SIGNATURES = {
    "plang_pipeset_create": (_vp, [ctypes.c_double, _i64]),
    "plang_pipeset_destroy": (None, [_vp]),
    "plang_pipeset_abort": (None, [_vp]),
    "plang_pipeset_status": (ctypes.c_int, [_vp, ctypes.POINTER(_i64), ctypes.POINTER(ctypes.c_int)]),
    "plang_pipeset_get": (_vp, [_vp, _i64, _i64, _i64]),
    "plang_pipe_push": (ctypes.c_int, [_vp, _vp, _i64]),
    "plang_pipe_pop": (ctypes.c_int, [_vp, _vp, _i64]),
    "plang_pipe_pop_ref": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
    "plang_pipe_free": (ctypes.c_int, [_vp]),
    "plang_pipeset_fail": (None, [_vp, ctypes.c_int, _i64, ctypes.c_int]),
    "plang_pipe_reserve_ref": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
    "plang_pipe_commit": (ctypes.c_int, [_vp]),
    "plang_pipe_push_many": (ctypes.c_int, [_vp, _vp, _i64, _i64]),
    "plang_pipe_pop_many": (ctypes.c_int, [_vp, _vp, _i64, _i64]),
    "plang_pipeset_close": (None, [_vp]),
    "plang_pipe_try_reserve_ref": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
    "plang_pipe_try_pop_ref": (ctypes.c_int, [_vp, ctypes.POINTER(_vp)]),
}


class PipeError(Error, RuntimeError):
    """A pipe operation failed: timeout (deadlock), size mismatch or misuse."""


def build_native(source_path: Path) -> str:
    """A C file of the runtime compiled into a shared library (cached by source hash)."""
    return native_build.build(source_path, flags=("-pthread",))


def load_native(source_path: Path, signatures: dict[str, tuple[Any, list]]) -> ctypes.CDLL:
    """`build_native(source_path)` loaded, each function given its (restype, argtypes)."""
    lib = ctypes.CDLL(build_native(source_path))
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


def lazy_native(source_path: Path, signatures: dict[str, tuple[Any, list]],
                on_load: Callable[[ctypes.CDLL], None] | None = None) -> Callable[[], ctypes.CDLL]:
    """A function returning the `load_native` library, built and loaded (then `on_load`) once,
    on its first call from any thread."""
    lock, loaded = threading.Lock(), []

    def get() -> ctypes.CDLL:
        with lock:
            if not loaded:
                lib = load_native(source_path, signatures)
                if on_load is not None:
                    on_load(lib)
                loaded.append(lib)
            return loaded[0]

    return get


def library_path() -> str:
    """Path of the compiled pipe library (compiled on first use, cached by source hash)."""
    return build_native(_SOURCE)


library = lazy_native(_SOURCE, _SIGNATURES)


def symbol_addresses() -> dict[str, int]:
    """C function addresses, for JIT-compiled kernels that call the ABI through pointers."""
    lib = library()
    return {name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in _SIGNATURES}


def _buffer(value: Any) -> tuple[int, int]:
    """(address, nbytes) of a contiguous numpy array or torch CPU tensor."""
    if isinstance(value, torch.Tensor):
        if not value.is_contiguous():
            raise PipeError("pipe transfers need a contiguous tensor")
        return value.data_ptr(), value.numel() * value.element_size()
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            raise PipeError("pipe transfers need a contiguous array")
        return value.ctypes.data, value.nbytes
    raise TypeError(f"pipe transfers take numpy arrays or torch tensors, got {type(value).__name__}")


class Pipe:
    """One ring buffer of a `PipeSet` (Python face of the C ABI)."""

    __slots__ = ("pipe_set", "pipe_id", "handle", "slot_bytes")

    def __init__(self, pipe_set: PipeSet, pipe_id: int, handle: int, slot_bytes: int) -> None:
        self.pipe_set, self.pipe_id, self.handle, self.slot_bytes = pipe_set, pipe_id, handle, slot_bytes

    def push(self, value: Any) -> None:
        addr, nbytes = _buffer(value)
        self._check(library().plang_pipe_push(self.handle, addr, nbytes), "push")

    def pop(self, out: Any) -> Any:
        """Fill `out` with the oldest pushed slot; the slot stays held until `free()`."""
        addr, nbytes = _buffer(out)
        self._check(library().plang_pipe_pop(self.handle, addr, nbytes), "pop")
        return out

    def free(self) -> None:
        self._check(library().plang_pipe_free(self.handle), "free")

    def _check(self, rc: int, op: str) -> None:
        if rc:
            raise PipeError(f"pipe {self.pipe_id}: {op} {STATUS.get(rc, rc)}")


def _default_pipe_name(pipe_id: int) -> str:
    return f"pipe {pipe_id}"


class PipeSet:
    """The pipes of one Group instance, each a ring of `slots` slots (the Group's
    ``pl.cross_core_slot`` count). ``handle`` is the ``void*`` native kernels take."""

    def __init__(self, timeout: float, slots: int = DEFAULT_SLOTS) -> None:
        if not isinstance(slots, int) or slots < 1:
            raise ValueError(f"a pipe needs at least one slot, got slots={slots!r}")
        self.timeout, self.slots = timeout, slots
        self.pipe_name: Callable[[int], str] = _default_pipe_name  # how error() names a pipe id
        self.handle: int | None = library().plang_pipeset_create(timeout, slots)
        if not self.handle:
            raise MemoryError("could not allocate a pipe set")

    def get(self, pipe_id: int, slot_bytes: int, slots: int | None = None) -> Pipe:
        """Pipe `pipe_id` (created on first use) with `slots` slots (default: the set's)."""
        slots = self.slots if slots is None else slots
        handle = library().plang_pipeset_get(self.handle, pipe_id, slot_bytes, slots)
        if not handle:
            raise PipeError(f"pipe {pipe_id}: both ends must agree on slot size and count "
                            f"(this end asked for {slots} slots of {slot_bytes} bytes)")
        return Pipe(self, pipe_id, handle, slot_bytes)

    def abort(self) -> None:
        """Wake every waiter with 'aborted' (a member of the Group failed)."""
        library().plang_pipeset_abort(self.handle)

    def end_run(self) -> None:
        """Wake every waiter with 'closed' (status 6): the run is over, which is no failure."""
        library().plang_pipeset_close(self.handle)

    def error(self) -> str | None:
        """A description of the first pipe failure, or None (also when the set was first
        aborted from outside: the member that failed reports its own error)."""
        pipe_id, op = _i64(), ctypes.c_int()
        status = library().plang_pipeset_status(self.handle, ctypes.byref(pipe_id), ctypes.byref(op))
        if status == 0 or (status == 2 and pipe_id.value < 0):
            return None
        name = self.pipe_name(pipe_id.value)
        return f"{name}: {OPS.get(op.value, op.value)} {STATUS.get(status, status)}" + (
            f" after {self.timeout:g} s" if status == 1 else "")

    def close(self) -> None:
        if self.handle:
            library().plang_pipeset_destroy(self.handle)
            self.handle = None
