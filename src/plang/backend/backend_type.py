"""`BackendType`: the Ascend chip a reference program targets."""

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
