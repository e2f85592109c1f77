"""The target: the simulated chip (`Device`) and the instruction set its kernels are
generated for (`Isa`), and the current device operators and designs resolve for."""

from .device import (
                     DEFAULT_CAPACITIES,
                     KIB,
                     PLATFORMS,
                     Device,
                     ensure_current_device,
                     get_current_device,
                     platform_device,
                     set_current_device,
)
from .isa import ENV_VAR, Isa, IsaError, host_level, runnable_levels

__all__ = ["DEFAULT_CAPACITIES", "KIB", "PLATFORMS", "Device", "ENV_VAR", "Isa", "IsaError",
           "ensure_current_device", "get_current_device", "host_level", "platform_device",
           "runnable_levels", "set_current_device"]
