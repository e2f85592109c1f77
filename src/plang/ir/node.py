"""`Node`: the immutable base of every IR object (types, expressions, statements, functions)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Iterator, Mapping

from .span import NO_SPAN, Span


class Node:
    """Immutable IR node. Subclasses list their structural fields in `_fields`.

    Fields are set once in `__init__` (through `_set`); `replace` returns a copy with some
    fields changed. `span` is never structural.
    """

    __slots__ = ("span",)
    _fields: tuple[str, ...] = ()

    def _set(self, span: Span | None, **fields: Any) -> None:
        object.__setattr__(self, "span", span or NO_SPAN)
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({key}=...)")

    def fields(self) -> Iterator[tuple[str, Any]]:
        for f in self._fields:
            yield f, getattr(self, f)

    def replace(self, **changes: Any) -> Node:
        """A copy with `changes` applied (unchanged fields are shared)."""
        cls = type(self)
        unknown = set(changes) - set(cls._fields) - {"span"}
        if unknown:
            raise TypeError(f"{cls.__name__} has no field(s) {sorted(unknown)}")
        new = object.__new__(cls)
        for f in _all_slots(cls):
            object.__setattr__(new, f, changes[f] if f in changes else getattr(self, f))
        new._after_replace()
        return new

    def _after_replace(self) -> None:
        """Hook for nodes with derived slots."""

    def __repr__(self) -> str:
        from .printer import python_print

        return f"<{type(self).__name__} {python_print(self)}>"


def freeze_attrs(attrs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only ordered copy of an attrs mapping."""
    return MappingProxyType(dict(attrs or {}))


_SLOTS: dict[type, tuple[str, ...]] = {}


def _all_slots(cls: type) -> tuple[str, ...]:
    slots = _SLOTS.get(cls)
    if slots is None:
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            for name in klass.__dict__.get("__slots__", ()):
                if name not in names:
                    names.append(name)
        slots = _SLOTS[cls] = tuple(names)
    return slots
