"""`PassContext`: the settings every pass run reads — instruments, verification, config and
disabled passes.

    with PassContext(instruments=[TimingInstrument()], verify=VerifyLevel.PROPERTIES,
                     disabled_passes={"Simplify"}):
        lowered = PassManager().run(program)   # also every `@pl.jit` compile in this thread

The current context is per thread (a `ContextVar`): a new thread starts from the empty
default, so one thread's instruments never run on another's passes (hand a context over
with `contextvars.copy_context().run`). Contexts nest: an inner one runs its instruments
after the outer ones, adds its disabled passes to theirs, overlays its config on theirs
and overrides the verify level when it gives one.
"""

from __future__ import annotations

from contextvars import ContextVar
from enum import IntEnum
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from ..target import Device
from .instruments import Instrument, VerifyPropertiesInstrument


class VerifyLevel(IntEnum):
    """How much a pass run verifies beyond each pass's required properties."""

    NONE = 0
    PROPERTIES = 1  # after every pass, every property believed to hold
    ALL = 2  # also, after the run, each default-pipeline verifier the run did not include


class PassContext:
    """Instruments, verify level, free-form `config` and `disabled_passes` (pass names,
    CamelCase or snake_case) for every pass run in this thread while entered.

    A disabled pass is skipped by `PassManager` pipelines (a standalone call still runs
    it); a later pass requiring a property only it produces then fails its required-property
    check with an error naming the disabled pass.
    """

    __slots__ = ("instruments", "verify", "config", "disabled_passes", "_parent")

    def __init__(self, instruments: Sequence[Instrument] = (), verify: VerifyLevel | int | bool | None = None,
                 config: Mapping[str, Any] | None = None, disabled_passes: Iterable[str] = (), *,
                 memory_planner: Any = None, enable_pypto_l0c_double_buffer: bool | None = None) -> None:
        self.instruments: tuple[Instrument, ...] = tuple(instruments)
        self.verify: VerifyLevel | None = None if verify is None else VerifyLevel(int(verify))
        # the reference's planner settings: read by the passes that choose L0 schedules
        named = {"memory_planner": memory_planner,
                 "enable_pypto_l0c_double_buffer": enable_pypto_l0c_double_buffer}
        config = {**(config or {}), **{k: v for k, v in named.items() if v is not None}}
        self.config: Mapping[str, Any] = MappingProxyType(config)
        self.disabled_passes: frozenset[str] = frozenset(disabled_passes)
        self._parent: PassContext | None = None

    @staticmethod
    def current() -> PassContext:
        """The context in effect in this thread (the empty default when none is entered)."""
        return _CURRENT.get()

    @property
    def verify_level(self) -> VerifyLevel:
        return VerifyLevel.NONE if self.verify is None else self.verify

    def __enter__(self) -> PassContext:
        outer = _CURRENT.get()
        merged = PassContext(outer.instruments + self.instruments,
                             outer.verify if self.verify is None else self.verify,
                             {**outer.config, **self.config}, outer.disabled_passes | self.disabled_passes)
        merged._parent = outer
        _CURRENT.set(merged)
        return merged

    def __exit__(self, *exc: object) -> None:
        inner = _CURRENT.get()
        if inner._parent is None:
            raise RuntimeError("PassContext exited more often than entered in this thread")
        _CURRENT.set(inner._parent)

    def instruments_with(self, own: Sequence[Instrument]) -> list[Instrument]:
        """`own` (a manager's instruments), then this context's, then a property verifier
        when the verify level asks for one and none is there yet."""
        out = [*own, *self.instruments]
        if self.verify_level >= VerifyLevel.PROPERTIES and \
                not any(isinstance(i, VerifyPropertiesInstrument) for i in out):
            out.append(VerifyPropertiesInstrument())
        return out

    def __repr__(self) -> str:
        return (f"PassContext(instruments={list(self.instruments)!r}, verify={self.verify!r}, "
                f"config={dict(self.config)!r}, disabled_passes={set(self.disabled_passes) or '{}'})")


_CURRENT: ContextVar[PassContext] = ContextVar("plang_pass_context", default=PassContext())


def target_device() -> Device:
    """The chip the passes target: the current context's ``config["device"]`` (the compiler
    sets it from the `RunConfig`), else the default `Device`."""
    device = PassContext.current().config.get("device")
    return device if device is not None else Device()
