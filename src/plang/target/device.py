"""`Device`: the simulated chip that passes, codegen and the runtime all read.

A chip has `clusters` core groups; each group holds one AIC (cube) and two AIV (vector)
cores. On-chip buffer capacities default to values close to an Ascend 910B core.
`platform_device` gives the chip of a platform name, the reference's ones (`PLATFORMS`) included.
`set_current_device` / `get_current_device` / `ensure_current_device` hold the chip that
operator resolution and IRON designs read when none is passed.
"""

from __future__ import annotations

import functools
import hashlib
import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..ir.enums import MemorySpace
from .isa import Isa

KIB = 1024

DEFAULT_CAPACITIES: Mapping[MemorySpace, int] = MappingProxyType({
    MemorySpace.Vec: 192 * KIB,
    MemorySpace.Mat: 512 * KIB,
    MemorySpace.Left: 64 * KIB,
    MemorySpace.Right: 64 * KIB,
    MemorySpace.Acc: 128 * KIB,
    MemorySpace.Bias: 1 * KIB,
})


@dataclass(frozen=True)
class Device:
    """Chip geometry. `clusters` defaults to the host's CPU count; `isa` is the instruction
    set its cores' kernels are generated for (an `Isa` or a spec such as ``"x86-64-v3"``;
    default `Isa.default()`: ``$PLANG_ISA``, else the host's level). `dma_channels` bounds the
    streams one core is fed at once (None: unlimited, as on the CPU)."""

    clusters: int = field(default_factory=lambda: os.cpu_count() or 1)
    aic_per_cluster: int = 1
    aiv_per_cluster: int = 2
    capacities: Mapping[MemorySpace, int] = field(default_factory=dict)
    isa: Isa | str | None = None
    dma_channels: int | None = None

    def __post_init__(self) -> None:
        if self.clusters < 1:
            raise ValueError(f"Device needs at least one core group, got clusters={self.clusters}")
        if self.dma_channels is not None and self.dma_channels < 1:
            raise ValueError(f"Device dma_channels must be >= 1 or None, got {self.dma_channels}")
        object.__setattr__(self, "capacities", MappingProxyType({**DEFAULT_CAPACITIES, **self.capacities}))
        object.__setattr__(self, "isa", Isa.resolve(self.isa))
        object.__setattr__(self, "_key", (
            self.clusters, self.aic_per_cluster, self.aiv_per_cluster,
            tuple(sorted((k.value, v) for k, v in self.capacities.items())), self.isa.key(),
            self.dma_channels))

    def capacity(self, space: MemorySpace) -> int:
        """Bytes available in one core's `space` buffer (DDR is unbounded: raises KeyError)."""
        return self.capacities[space]

    @property
    def aic_count(self) -> int:
        return self.clusters * self.aic_per_cluster

    @property
    def aiv_count(self) -> int:
        return self.clusters * self.aiv_per_cluster

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")  # computed once: devices key many per-call memos
        if h is None:
            h = hash(self._key)
            object.__setattr__(self, "_hash", h)
        return h

    def key(self) -> tuple:
        """A hashable description for cache keys (computed once: a device is immutable)."""
        return self._key

    @property
    def name(self) -> str:
        """A stable name of the geometry, e.g. ``"cpu-2x1c2v"``: core groups x AIC and AIV
        per group, then a digest of the capacities and the channel limit where they differ
        from the defaults, then the ISA where it is not `Isa.default()`."""
        name = f"cpu-{self.clusters}x{self.aic_per_cluster}c{self.aiv_per_cluster}v"
        extra = (dict(self.capacities) != dict(DEFAULT_CAPACITIES), self.dma_channels is not None)
        if any(extra):
            text = repr((sorted((k.value, v) for k, v in self.capacities.items()), self.dma_channels))
            name += "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
        if self.isa.key() != Isa.default().key():
            name += "@" + self.isa.spec()
        return name


_CURRENT: ContextVar[Device | None] = ContextVar("plang_current_device", default=None)


class _Restore:
    """What `set_current_device` returns: a plain call keeps the device; ``with`` restores the
    previous one on exit."""

    def __init__(self, token) -> None:
        self._token = token

    def __enter__(self) -> Device:
        return self._token.var.get()

    def __exit__(self, *exc) -> None:
        self._token.var.reset(self._token)


def set_current_device(dev: Device) -> _Restore:
    """Make `dev` the current device (of this thread / task context); returns a context
    manager that restores the previous one, so ``with set_current_device(dev):`` scopes it."""
    if not isinstance(dev, Device):
        raise TypeError(f"set_current_device() takes a plang.target.Device, got {type(dev).__name__}")
    return _Restore(_CURRENT.set(dev))


def get_current_device() -> Device:
    """The current device, else a default (host-sized) `Device()`."""
    dev = _CURRENT.get()
    return _default_device(os.cpu_count() or 1, Isa.default()) if dev is None else dev


@functools.cache
def _default_device(clusters: int, isa: Isa) -> Device:
    """`Device()` for this core count and default ISA (one object per pair: a device is
    immutable, and a call with no device in scope then builds none)."""
    return Device(clusters=clusters, isa=isa)


def ensure_current_device() -> Device:
    """The current device, making a default `Device()` current first where none is."""
    dev = _CURRENT.get()
    if dev is None:
        dev = Device()
        _CURRENT.set(dev)
    return dev



#: the reference's platforms: core groups per chip and the usable on-chip buffer bytes per core
#: (its SoC description: a2a3 = Ascend 910B, a5 = Ascend 950; Vec is the safe usable UB)
PLATFORMS: Mapping[str, tuple[int, Mapping[MemorySpace, int]]] = MappingProxyType({
    "a2a3": (24, MappingProxyType({
        MemorySpace.Vec: 184 * KIB, MemorySpace.Mat: 512 * KIB, MemorySpace.Left: 64 * KIB,
        MemorySpace.Right: 64 * KIB, MemorySpace.Acc: 128 * KIB, MemorySpace.Bias: 1 * KIB})),
    "a5": (36, MappingProxyType({
        MemorySpace.Vec: 240 * KIB, MemorySpace.Mat: 512 * KIB, MemorySpace.Left: 64 * KIB,
        MemorySpace.Right: 64 * KIB, MemorySpace.Acc: 256 * KIB, MemorySpace.Bias: 4 * KIB,
        MemorySpace.LeftScale: 4 * KIB, MemorySpace.RightScale: 4 * KIB})),
})


def platform_device(platform: str, *, clusters: int | None = None, isa: Isa | str | None = None) -> Device:
    """The simulated chip of `platform`: ``"cpu"`` (host-sized), or one of the reference's
    ``"a2a3"`` / ``"a5"`` (a ``sim`` suffix names the same chip) with its core-group count and
    buffer capacities; `clusters` overrides the core-group count."""
    if platform == "cpu":
        return Device(isa=isa) if clusters is None else Device(clusters=clusters, isa=isa)
    try:
        groups, capacities = PLATFORMS[platform.removesuffix("sim")]
    except KeyError:
        raise ValueError(f"unknown platform {platform!r}; available: cpu, "
                         f"{', '.join(f'{p}, {p}sim' for p in PLATFORMS)}") from None
    return Device(clusters=groups if clusters is None else clusters, capacities=capacities, isa=isa)
