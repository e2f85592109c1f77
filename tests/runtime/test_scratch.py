"""The runtime's per-thread kernel scratch (`plang.runtime.scratch`, ``native/scratch.c``):
what a thread keeps between calls, what it gives back, and what it never keeps."""

from __future__ import annotations

import ctypes
from concurrent.futures import ThreadPoolExecutor

from plang.codegen.kernel.abi import LaunchContext
from plang.runtime import scratch

MIB = 1 << 20


def _on_a_new_thread(fn):
    """fn() run on a fresh thread (a scratch cache of its own); its result."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn).result()


def test_a_released_buffer_is_what_the_next_acquire_gets() -> None:
    lib = scratch.library()

    def steps():
        p = lib.plang_scratch_acquire(MIB)
        ctypes.memset(p, 1, MIB)  # 64-byte aligned and writable over all it was asked for
        kept_while_held = scratch.kept_bytes()
        lib.plang_scratch_release(p)
        kept = scratch.kept_bytes()
        again = lib.plang_scratch_acquire(MIB - 100)  # smaller fits the kept one
        lib.plang_scratch_release(again)
        return p, kept_while_held, kept, again

    p, held, kept, again = _on_a_new_thread(steps)
    assert p % 64 == 0 and held == 0 and kept == MIB and again == p


def test_the_smallest_buffer_that_fits_is_taken() -> None:
    lib = scratch.library()

    def steps():
        big, small = lib.plang_scratch_acquire(4 * MIB), lib.plang_scratch_acquire(MIB)
        lib.plang_scratch_release(big)
        lib.plang_scratch_release(small)
        got = lib.plang_scratch_acquire(MIB // 2)
        too_big = lib.plang_scratch_acquire(8 * MIB)  # larger than any kept: a new one
        lib.plang_scratch_release(got)
        lib.plang_scratch_release(too_big)
        return got == small, too_big not in (big, small), scratch.kept_bytes()

    assert _on_a_new_thread(steps) == (True, True, 13 * MIB)


def test_a_thread_keeps_at_most_32_mib_dropping_smaller_buffers_first() -> None:
    lib = scratch.library()

    def steps():
        # released in this order: the 16 drops one 8 to fit, the 40 is never kept, and the
        # 4 fits only by dropping larger ones, so it is freed
        held = [lib.plang_scratch_acquire(mib * MIB) for mib in (8, 8, 8, 16, 40, 4)]
        for p in held:
            lib.plang_scratch_release(p)
        small = lib.plang_scratch_acquire(MIB)  # the smallest kept now is an 8
        lib.plang_scratch_release(small)
        return scratch.kept_bytes(), small in held[:3]

    assert _on_a_new_thread(steps) == (32 * MIB, True)


def test_a_thread_keeps_at_most_eight_buffers() -> None:
    lib = scratch.library()

    def steps():
        held = [lib.plang_scratch_acquire(64 << 10) for _ in range(10)]
        for p in held:
            lib.plang_scratch_release(p)
        return scratch.kept_bytes()

    assert _on_a_new_thread(steps) == 8 * (64 << 10)


def test_threads_keep_their_own_buffers_and_may_release_each_others() -> None:
    lib = scratch.library()
    p = _on_a_new_thread(lambda: lib.plang_scratch_acquire(MIB))
    assert _on_a_new_thread(lambda: (lib.plang_scratch_release(p), scratch.kept_bytes())[1]) == MIB
    assert _on_a_new_thread(scratch.kept_bytes) == 0


def test_no_memory_and_nothing_to_release_are_not_errors() -> None:
    lib = scratch.library()
    assert lib.plang_scratch_acquire(-1) is None
    assert lib.plang_scratch_acquire(1 << 62) is None
    lib.plang_scratch_release(None)


def test_every_launch_context_points_at_the_scratch_functions() -> None:
    ctx = LaunchContext()
    assert (ctx.scratch_acquire, ctx.scratch_release) == scratch.addresses() and all(scratch.addresses())
