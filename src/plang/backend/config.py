"""The process-wide backend type, set once, as in the reference: `set_backend_type` may repeat the
same type but not change it (`reset_for_testing` clears it). Compiling does not need it — the
`RunConfig` platform picks the simulated chip — but passes that size work to a chip's L0 / UB
capacities (`passes.auto_tile_matmul_l0`) read it, defaulting to Ascend910B."""

from __future__ import annotations

from .backend_type import BackendType
from .soc import Backend, Backend910B, Backend950

_configured: BackendType | None = None


def set_backend_type(backend_type: BackendType) -> None:
    """Configure the backend type; ValueError when a different one is already set."""
    global _configured
    if not isinstance(backend_type, BackendType):
        raise TypeError(f"set_backend_type takes a BackendType, got {backend_type!r}")
    if _configured is not None and _configured is not backend_type:
        raise ValueError(f"the backend type is already {_configured.name}; it cannot change to "
                         f"{backend_type.name} (backend.reset_for_testing() clears it)")
    _configured = backend_type


def get_backend_type() -> BackendType:
    """The configured backend type; ValueError when none is set."""
    if _configured is None:
        raise ValueError("no backend type is configured: call plang.backend.set_backend_type(...)")
    return _configured


def is_backend_configured() -> bool:
    """True once `set_backend_type` has been called (and not reset)."""
    return _configured is not None


def reset_for_testing() -> None:
    """Forget the configured backend type."""
    global _configured
    _configured = None


def get_backend_instance(backend_type: BackendType) -> Backend:
    """The `Backend` description of `backend_type`, whatever is configured."""
    return (Backend950 if backend_type is BackendType.Ascend950 else Backend910B).instance()
