"""Facts about the host CPU, read once: architecture, feature flags, last-level cache size,
and whether the OS lets this process use AMX tiles.

This is the only module that reads `/proc/cpuinfo` and `/sys`; everything else asks the
kernel target (`plang.target.Isa`), which is built from these facts.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import platform


def machine() -> str:
    """`x86_64` or `aarch64` (`arm64` on macOS reads as `aarch64`)."""
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


@functools.cache
def cpu_flags() -> frozenset:
    """The CPU feature flags as the kernel names them (`avx512f`, `asimd`, ...)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


_SYS_ARCH_PRCTL = 158  # x86-64 syscall number
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18


@functools.cache
def amx_permitted() -> bool:
    """Whether this process may execute AMX tile instructions. Linux hands out the (large)
    tile state only on request; the first call asks, for the whole process and the threads
    it starts (without it the first tile instruction is SIGILL)."""
    if machine() != "x86_64" or "amx_tile" not in cpu_flags():
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) == 0
    except (OSError, AttributeError):
        return False


@functools.cache
def last_level_cache_bytes() -> int | None:
    """Size of the largest cache level of CPU 0 (the shared L3 on these machines)."""
    best: tuple[int, int] | None = None
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(f"{d}/level") as f:
                level = int(f.read())
            with open(f"{d}/size") as f:
                size = _parse_size(f.read().strip())
        except (OSError, ValueError):
            continue
        if best is None or (level, size) > best:
            best = (level, size)
    return None if best is None else best[1]


def _parse_size(text: str) -> int:
    """'32768K' / '1M' / '512' -> bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)
