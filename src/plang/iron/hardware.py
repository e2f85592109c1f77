"""The error of a construct the CPU chip has no hardware for."""

from __future__ import annotations

from ..errors import UnsupportedConstructError


def hardware_only(construct: str, why: str) -> UnsupportedConstructError:
    return UnsupportedConstructError(
        f"{construct} is {why}; the CPU chip has no such hardware",
        hint="move data with ObjectFifo (prod()/cons(), split/join/forward) and the Runtime's "
             "fill()/drain()")
