"""The reference's backend selector under plang's name: `BackendType` names the Ascend chip a
program targets. plang runs every backend on its simulated chip; the `RunConfig` platform, not
the backend type, chooses that chip's geometry (as in the reference, the platform wins)."""

from enum import Enum


class BackendType(Enum):
    """The reference's code-generation backends: Ascend910B (platforms a2a3 / a2a3sim) and
    Ascend950 (a5 / a5sim)."""

    Ascend910B = 0
    Ascend950 = 1

    @classmethod
    def for_platform(cls, platform: str) -> "BackendType":
        """The backend a platform name implies (``a5*``: Ascend950, anything else: Ascend910B)."""
        return cls.Ascend950 if platform.startswith("a5") else cls.Ascend910B


from .soc import Backend, Backend910B, Backend950  # noqa: E402

__all__ = ["Backend", "Backend910B", "Backend950", "BackendType"]
