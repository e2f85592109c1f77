"""`Operator`: subclass it, and its class body is its declaration; `Unresolvable`.

An operator's parameters live in the instance's ``__dict__``; `resolve(dev)` fills its
tunables for a device, `resolved(dev)` checks and memoizes that, `replace` / `copy` make
copies, `layout()` is the view the cores are built from, and `array_key()` / `design_key()`
are the identities two operators share their cores / their build by.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, Iterator

import numpy as np

from ..dtypes import DataType
from ..target import Device, set_current_device
from .declaration import Declaration
from .params import MISSING, is_function


class Unresolvable(ValueError):
    """No legal resolution exists for this operator on this device."""


def key_value(value: Any) -> Any:
    """A parameter's value as a hashable, process-independent key part."""
    if isinstance(value, DataType):
        return value.name
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    if isinstance(value, Enum):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(key_value(v) for v in value)
    if type(value).__module__ == "torch":
        return str(value)
    return value


class _Bound(Mapping):
    """`Operator.bound`: each present member as it reads on one operator (read lazily)."""

    def __init__(self, op: Any, names: tuple[str, ...]) -> None:
        self._op, self._names = op, names

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        member = next(m for m in self._op.declaration.members if m.name == name)
        return member.of(self._op)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class Operator:
    """An operator. Subclass it; each subclass's body is its declaration.

    declaration: what the class declares. reference_only: the operator has a reference and
    no kernel yet. trace: what the build traces, or None. A subclass with ``library=True`` is
    an operator library (it adds building, tuning and dispatch); its own body is no
    declaration and it cannot be instantiated.
    """

    declaration: Declaration
    reference_only: bool = False
    _library = True

    def __init_subclass__(cls, library: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._library = library
        if not library:
            cls.declaration = Declaration.from_class(cls)

    def __init__(self, *, trace: Any = None, **given: Any) -> None:
        if type(self)._library:
            raise TypeError(f"{type(self).__name__} is an operator library; subclass it")
        params = self.declaration.params
        unknown = [n for n in given if n not in params or not params[n].init]
        if unknown:
            raise TypeError(f"{type(self).__name__}() takes no argument {unknown}")
        missing = [n for n, p in params.items()
                   if p.init and p.default is MISSING and p.derive is None and n not in given]
        if missing:
            raise TypeError(f"{type(self).__name__}() needs {missing}")
        self.trace = trace
        self._given = frozenset(n for n, v in given.items() if v is not None)
        self._set(given)

    def _set(self, values: Mapping[str, Any]) -> None:
        """Fill every parameter from `values`, computing the rest; then `validate()`."""
        params = self.declaration.params
        state = vars(self)
        computed = []
        for n, p in params.items():
            value = values.get(n)
            if value is not None or (n in values and p.tunable and not p.computes()):
                state[n] = value
            elif p.derive is not None or is_function(p.default):
                computed.append(n)
            else:
                state[n] = None if p.default is MISSING else p.default
        for n in computed:
            p = params[n]
            state[n] = p.derive(self) if p.derive is not None else p.default(self)
        for n, p in params.items():
            if p.derive is not None and n not in computed:
                expected = p.derive(self)
                if state[n] != expected:
                    raise ValueError(f"{type(self).__name__}: {n}={state[n]!r} but its derive gives "
                                     f"{expected!r}")
        self._resolved = False
        self._resolved_for: Device | None = None
        self._unresolved: Operator = self
        self.validate()

    # ------------------------------------------------------------ views
    @property
    def bound(self) -> Mapping[str, Any]:
        """What each present member reads as on this operator: its operands bound to it (an
        operand whose ``when=`` flag is false is absent) and its per-call values."""
        names = getattr(self, "_bound_names", None)
        if names is None:
            names = tuple(m.name for m in self.declaration.members
                          if getattr(m, "when", None) is None or bool(getattr(self, m.when.name)))
        return _Bound(self, names)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={vars(self)[n]!r}" for n, p in self.declaration.params.items() if p.repr)
        return f"{type(self).__name__}({shown})"

    # ------------------------------------------------------------ checks
    def validate(self) -> None:
        """Check the parameters on their own; raise `ValueError`. Runs at construction."""

    def compatible(self) -> None:
        """Check the parameters against the resolved tunables; raise `ValueError`. Runs on the
        copy `resolved` returns, with the device current."""

    # ------------------------------------------------------------ resolution
    def resolve(self, dev: Device) -> Operator:
        """A copy with every tunable filled for `dev` (``self.replace(...)``); raises
        `Unresolvable` when no legal value exists there."""
        return self.replace()

    def resolved(self, dev: Device) -> Operator:
        """This operator resolved for `dev`, which is current while it resolves and is
        checked. One already resolved for `dev` is itself; one that came from an unresolved
        operator (by resolving, or by `replace` of a resolved one) is resolved from it."""
        if self._resolved and self._resolved_for == dev:
            return self
        if self._unresolved is not self:
            return self._unresolved.resolved(dev)
        name = type(self).__name__
        with set_current_device(dev):
            new = self.resolve(dev)
            if new is self or not isinstance(new, type(self)):
                raise TypeError(f"{name}.resolve() must return a copy, self.replace(...)")
            missing = [n for n, p in self.declaration.params.items() if p.tunable and vars(new)[n] is None]
            if missing:
                raise Unresolvable(f"{name}.resolve() left {missing} unset for {dev}")
            new.compatible()
        new._resolved = True
        new._resolved_for = dev
        new._unresolved = self
        return new

    @property
    def is_resolved(self) -> bool:
        """Whether `resolved` made this operator (and for which device: `resolved_for`)."""
        return self._resolved

    @property
    def resolved_for(self) -> Device | None:
        """The device this operator's tunables were resolved for, or None."""
        return self._resolved_for

    def replace(self, **changes: Any) -> Operator:
        """A copy with `changes`, which may name any parameter.

        A parameter not in `changes` that a derive or a function default computed is computed
        again; one a caller gave, a derive one included, keeps its value (give it None to
        compute it again). The copy is not resolved, but its keys keep naming the device its
        tunables were resolved for, and a copy of a resolved operator resolves for another
        device from the unresolved one, with `changes` applied.
        """
        params = self.declaration.params
        unknown = [n for n in changes if n not in params]
        if unknown:
            raise TypeError(f"{type(self).__name__} has no parameter {unknown}")
        kept = {n: vars(self)[n] for n, p in params.items()
                if n in self._given or (p.derive is None and not is_function(p.default))}
        new = object.__new__(type(self))
        new.trace = self.trace
        new._given = self._given.difference(changes) | {n for n, v in changes.items() if v is not None}
        new._set(kept | changes)
        new._resolved_for = self._resolved_for
        if self._unresolved is not self:
            unresolved = self._unresolved
            new._unresolved = unresolved.replace(**changes) if changes else unresolved
        return new

    def copy(self) -> Operator:
        """A fresh instance with every value, still resolved as this one is."""
        new = self.replace()
        new._resolved = self._resolved
        return new

    def layout(self) -> Operator:
        """This operator as its cores see it: the key's parameters and the members. Reading
        any other parameter on it (directly, or through a member's dims) raises
        `AttributeError`."""
        view = object.__new__(type(self))
        vars(view).update({n: vars(self)[n] for n in self.declaration.key}, trace=self.trace)
        view._bound_names = tuple(self.bound)
        return view

    # ------------------------------------------------------------ keys
    def _device_part(self) -> tuple:
        dev = self._resolved_for
        return ("device", None if dev is None else dev.name)

    def array_key(self) -> tuple:
        """The identity two operators share their cores by; it names the device this operator
        is resolved for (None until resolved), since the resolved tunables depend on it."""
        key = (type(self), self._device_part(),
               *((n, key_value(vars(self)[n])) for n in self.declaration.key))
        return key if self.trace is None else (*key, ("trace", self.trace))

    def design_key(self) -> tuple:
        """The identity two operators share a build by: the device and every parameter."""
        return (type(self), (self._device_part(), ("trace", self.trace),
                             *((n, key_value(vars(self)[n])) for n in self.declaration.params)))
