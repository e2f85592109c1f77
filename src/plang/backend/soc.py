"""The reference's SoC model of a backend, read from plang's simulated chip: `Backend910B` /
`Backend950` (`.instance()`) describe the platform's chip (``a2a3`` / ``a5``) as one die of
core groups, each with its AIC (CUBE) core and AIV (VECTOR) cores and their buffer sizes."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..ir.enums import MemorySpace
from ..pypto_core.ir import CoreType

CUBE_SPACES = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias)


@dataclass(frozen=True)
class Mem:
    mem_type: MemorySpace
    mem_size: int
    alignment: int = 32


@dataclass(frozen=True)
class Core:
    core_type: CoreType
    mems: tuple[Mem, ...]


@dataclass(frozen=True)
class Cluster:
    core_counts: Mapping[Core, int] = field(hash=False)

    def total_core_count(self) -> int:
        return sum(self.core_counts.values())


@dataclass(frozen=True)
class Die:
    cluster_counts: Mapping[Cluster, int] = field(hash=False)

    def total_cluster_count(self) -> int:
        return sum(self.cluster_counts.values())

    def total_core_count(self) -> int:
        return sum(c.total_core_count() * n for c, n in self.cluster_counts.items())


@dataclass(frozen=True)
class SoC:
    die_counts: Mapping[Die, int] = field(hash=False)

    def total_die_count(self) -> int:
        return sum(self.die_counts.values())

    def total_cluster_count(self) -> int:
        return sum(d.total_cluster_count() * n for d, n in self.die_counts.items())

    def total_core_count(self) -> int:
        return sum(d.total_core_count() * n for d, n in self.die_counts.items())


class Backend:
    """A backend's chip: `soc`, buffer sizes and core counts of the platform it runs as."""

    platform = ""
    _instance: Backend | None = None

    def __init__(self) -> None:
        from ..target.device import platform_device

        device = platform_device(self.platform)
        mems = lambda spaces: tuple(Mem(s, device.capacity(s)) for s in spaces  # noqa: E731
                                    if s in device.capacities)
        cube, vector = Core(CoreType.CUBE, mems(CUBE_SPACES)), Core(CoreType.VECTOR, mems((MemorySpace.Vec,)))
        group = Cluster(MappingProxyType({cube: device.aic_per_cluster, vector: device.aiv_per_cluster}))
        self.soc = SoC(MappingProxyType({Die(MappingProxyType({group: device.clusters})): 1}))
        self._device = device

    @classmethod
    def instance(cls) -> Backend:
        if cls.__dict__.get("_instance") is None:
            cls._instance = cls()
        return cls._instance

    def get_type_name(self) -> str:
        return type(self).__name__.removeprefix("Backend")

    def get_mem_size(self, mem_type: MemorySpace) -> int:
        return self._device.capacity(mem_type)

    def get_core_count(self, core_type: CoreType) -> int:
        d = self._device
        return d.aic_count if core_type is CoreType.CUBE else d.clusters * d.aiv_per_cluster


class Backend910B(Backend):
    """Ascend 910B: the ``a2a3`` platform's chip."""

    platform = "a2a3"


class Backend950(Backend):
    """Ascend 950: the ``a5`` platform's chip."""

    platform = "a5"


__all__ = ["Backend", "Backend910B", "Backend950", "Cluster", "Core", "Die", "Mem", "SoC"]
