"""Annotation markers of a design generator's parameters: `CompileTime[T]` and
`DispatchTime[T]` (with `In`, `Out` and `InOut` from `operands`, the five categories).

``CompileTime[T]`` marks a compile-time parameter: changing its value is a new build (as
Triton's ``tl.constexpr``). ``DispatchTime[T]`` marks a keyword-only integer scalar that may
change every dispatch without a rebuild; ``T`` is a NumPy integer scalar type. Both are
``typing.Annotated[T, tag]``, so a type checker sees ``T`` and `marker_of` recovers the tag
from ``get_type_hints(..., include_extras=True)``.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin

import numpy as np

from .operands import Operand


class MarkerTag:
    """The tag an ``Annotated`` marker carries; `name` is what a `PerCall` marker reads."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


COMPILE_TIME = MarkerTag("plang.compile_time")
DISPATCH_TIME = MarkerTag("plang.dispatch_time")


class CompileTime:
    """``CompileTime[T]``: a compile-time parameter of type ``T``; required unless it has a
    default, and each value is its own build."""

    def __class_getitem__(cls, item: Any) -> Any:
        return Annotated[item, COMPILE_TIME]

    def __init__(self) -> None:
        raise TypeError("CompileTime is an annotation: write CompileTime[int]")


class DispatchTime:
    """``DispatchTime[T]``: a keyword-only integer scalar, ``T`` a NumPy integer type
    (``np.int32``), that may change every dispatch without a rebuild."""

    def __class_getitem__(cls, item: Any) -> Any:
        if not (isinstance(item, type) and issubclass(item, np.integer)):
            raise TypeError(f"DispatchTime[{getattr(item, '__name__', item)}]: T must be a NumPy "
                            f"integer scalar type such as np.int32 (built-in int/bool and "
                            f"floating-point types are rejected)")
        return Annotated[item, DISPATCH_TIME]

    def __init__(self) -> None:
        raise TypeError("DispatchTime is an annotation: write DispatchTime[np.int32]")


def marker_of(hint: Any) -> Any:
    """The marker of an evaluated annotation: `COMPILE_TIME`, `DISPATCH_TIME`, the `Operand`
    class (`In`, `Out`, `InOut`) of an operand annotation, or None for an unmarked one."""
    if get_origin(hint) is Annotated:
        for tag in get_args(hint)[1:]:
            if tag is COMPILE_TIME or tag is DISPATCH_TIME:
                return tag
        return None
    if isinstance(hint, type) and issubclass(hint, Operand) and hint is not Operand:
        return hint
    if isinstance(hint, Operand):
        return type(hint)
    return None


def marked_type(hint: Any) -> Any:
    """The ``T`` of ``CompileTime[T]`` / ``DispatchTime[T]``; any other hint as it is."""
    return get_args(hint)[0] if get_origin(hint) is Annotated else hint
