"""`Pass`: the base of every pass, and the registry the pipelines look passes up in.

A pass is a class with a CamelCase `name`, the properties it `required` / `produced` /
`invalidated` (names from `properties.PROPERTIES`) and `run(program) -> Program`.
Decorating it with `@register_pass` makes it available by name to `PassManager` pipelines
and as `plang.passes.<snake_name>` (e.g. `plang.passes.convert_to_ssa()(program)`).
A pass never imports another pass; shared analyses live in `passes/analysis/`.

`FunctionPass` is the common case: it maps `run_on_function` over every function.
`define_verifier(name, check)` registers a property and a verifier pass of that name.
"""

from __future__ import annotations

import re
from typing import ClassVar

from ..ir.function import Function, Program
from .context import PassContext
from .diagnostics import PassError
from .properties import Check, get_property, register_property


class Pass:
    """One IR-to-IR transformation (or a verifier, which returns its input unchanged)."""

    name: ClassVar[str] = ""
    required: ClassVar[frozenset[str]] = frozenset()
    produced: ClassVar[frozenset[str]] = frozenset()
    invalidated: ClassVar[frozenset[str]] = frozenset()

    def run(self, program: Program) -> Program:
        raise NotImplementedError(f"{type(self).__name__}.run")

    def check_required(self, program: Program, held: frozenset[str] = frozenset()) -> None:
        """Verify every required property not already known to hold."""
        for prop in sorted(self.required - held):
            try:
                get_property(prop).verify(program)
            except PassError as e:
                raise PassError(f"pass {self.name} requires property {prop}, which the IR lacks: "
                                f"{e.message}", e.span, self.name) from None

    def __call__(self, program: Program) -> Program:
        """Run standalone: check the required properties, then transform, with the current
        `PassContext`'s instruments around it (as a one-pass pipeline)."""
        instruments = PassContext.current().instruments_with(())
        for inst in instruments:
            inst.run_start(program)
        self.check_required(program)
        for inst in instruments:
            inst.before_pass(self, program)
        out = self.run(program)
        held = (self.required - self.invalidated) | self.produced
        for inst in instruments:
            inst.after_pass(self, out, held)
        return out

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


class FunctionPass(Pass):
    """A pass that rewrites each function independently."""

    def run(self, program: Program) -> Program:
        functions = [self.run_on_function(fn, program) for fn in program.functions.values()]
        if all(new is old for new, old in zip(functions, program.functions.values())):
            return program
        return program.with_functions(functions)

    def run_on_function(self, fn: Function, program: Program) -> Function:
        raise NotImplementedError(f"{type(self).__name__}.run_on_function")


PASSES: dict[str, type[Pass]] = {}
_BY_SNAKE: dict[str, type[Pass]] = {}


def snake_name(name: str) -> str:
    """`ConvertToSSA` -> `convert_to_ssa`, `InOutUseValid` -> `in_out_use_valid`."""
    return re.sub(r"(?<=[a-z])(?=[A-Z0-9])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def register_pass(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make `cls` available by name to pipelines and `plang.passes`.

    Property names are checked when a `PassManager` is built, so a pass may name a property
    registered by a module imported after its own.
    """
    if not cls.name:
        raise ValueError(f"pass class {cls.__name__} has no `name`")
    if cls.name in PASSES:
        raise ValueError(f"pass {cls.name!r} registered twice")
    PASSES[cls.name] = cls
    _BY_SNAKE[snake_name(cls.name)] = cls
    return cls


def get_pass(name: str) -> type[Pass]:
    """A registered pass class by CamelCase or snake_case name."""
    cls = PASSES.get(name) or _BY_SNAKE.get(name)
    if cls is None:
        raise KeyError(f"no pass named {name!r} is registered; registered passes: "
                       f"{', '.join(PASSES) or '(none)'}")
    return cls


class VerifierPass(Pass):
    """A pass that verifies the property of its own name and returns the program unchanged."""

    def run(self, program: Program) -> Program:
        get_property(self.name).verify(program)
        return program


def define_verifier(name: str, check: Check, doc: str = "") -> type[Pass]:
    """Register property `name` with `check` and a verifier pass of the same name."""
    register_property(name, check, doc)
    cls = type(name, (VerifierPass,), {"name": name, "produced": frozenset({name}), "__doc__": doc})
    return register_pass(cls)
