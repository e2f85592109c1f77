"""IR properties: named facts about a Program, each with a verifier.

A verifier is `check(program) -> None` that raises `PassError` (with the span of the first
offending node) when the program lacks the property. Passes declare the properties they
require, produce and invalidate by name; the `PassManager` tracks which hold and runs a
verifier only when it cannot know (a required property nothing produced) or when asked to
verify. Any module may register a property; verifier modules under `passes/verifiers/`
register the ones the default pipeline checks at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..ir.function import Program
from .diagnostics import PassError

Check = Callable[[Program], None]


@dataclass(frozen=True)
class Property:
    name: str
    check: Check
    doc: str = ""

    def verify(self, program: Program) -> None:
        """Raise `PassError` (attributed to this property) when `program` lacks it."""
        try:
            self.check(program)
        except PassError as e:
            raise e.with_pass(self.name) from None


PROPERTIES: dict[str, Property] = {}


def register_property(name: str, check: Check, doc: str = "") -> Property:
    if name in PROPERTIES:
        raise ValueError(f"property {name!r} registered twice")
    prop = PROPERTIES[name] = Property(name, check, doc)
    return prop


def get_property(name: str) -> Property:
    try:
        return PROPERTIES[name]
    except KeyError:
        raise KeyError(f"unknown IR property {name!r}; registered: {', '.join(sorted(PROPERTIES))}") \
            from None


def property_holds(name: str, program: Program) -> bool:
    try:
        get_property(name).verify(program)
    except PassError:
        return False
    return True
