"""`pypto_core.ir` names the reference's harnesses import: `CoreType` (the two core kinds of
a core group)."""

from enum import IntEnum


class CoreType(IntEnum):
    """A core of a core group: VECTOR (an AIV core) or CUBE (the AIC core)."""

    VECTOR = 0
    CUBE = 1


__all__ = ["CoreType"]
