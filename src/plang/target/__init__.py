"""The target: the simulated chip (`Device`) and the instruction set its kernels are
generated for (`Isa`)."""

from .device import DEFAULT_CAPACITIES, KIB, PLATFORMS, Device, platform_device
from .isa import ENV_VAR, Isa, IsaError, host_level, runnable_levels

__all__ = ["DEFAULT_CAPACITIES", "KIB", "PLATFORMS", "Device", "ENV_VAR", "Isa", "IsaError",
           "host_level", "platform_device", "runnable_levels"]
