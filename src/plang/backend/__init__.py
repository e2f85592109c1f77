"""The reference's backend selector under plang's name: `BackendType` names the Ascend chip a
program targets. plang runs every backend on its simulated chip; the `RunConfig` platform, not
the backend type, chooses that chip's geometry (as in the reference, the platform wins)."""

from .backend_type import BackendType
from .config import (
    get_backend_instance,
    get_backend_type,
    is_backend_configured,
    reset_for_testing,
    set_backend_type,
)
from .soc import Backend, Backend910B, Backend950

__all__ = ["Backend", "Backend910B", "Backend950", "BackendType", "get_backend_instance", "get_backend_type",
           "is_backend_configured", "reset_for_testing", "set_backend_type"]
