"""`Declaration`: what an operator declares, read from its class body (or from a design
generator's signature), and `infer`, which reads the parameters off the operands' shapes."""

from __future__ import annotations

import functools
import inspect
import math
import re
import typing
from types import FunctionType
from typing import Any, Mapping, Sequence, Union

from .markers import COMPILE_TIME, DISPATCH_TIME, marked_type, marker_of
from .operands import Operand
from .params import MISSING, OperatorParam, PerCallMember, Select

Member = Union[Operand, PerCallMember]


def _names(dims: Sequence[Any]) -> set[str]:
    """The parameters a dims tuple names, inside `Select`\\ s too (their flags included)."""
    names: set[str] = set()
    for d in dims:
        if isinstance(d, OperatorParam):
            names.add(d.name)
        elif isinstance(d, Select):
            names |= {d.flag.name} | _names(d.when_true) | _names(d.when_false)
    return names


def _optional(annotation: Any) -> bool:
    """An annotation ``T | None`` / ``Optional[T]``, evaluated or as source text."""
    if isinstance(annotation, str):
        return bool(re.search(r"(\|\s*None\b)|(\bNone\s*\|)|^Optional\[", annotation.strip()))
    return type(None) in typing.get_args(annotation)


def _unset(value: Any) -> bool:
    """A flag value that says nothing: missing, or computed by a function."""
    return value is MISSING or isinstance(value, FunctionType)


class Declaration:
    """What an operator declares.

    name: the class's or the generator's name. params: every compile-time parameter
    (``param()``, ``tunable()``, ``CompileTime[T]``) by name, a base's first. members: the
    operands and per-call values, the most derived body's order first. nullable: the
    parameters annotated ``T | None`` (a shape dim of one is present only where it is not
    None). scalars: a generator's parameters with no marker. signature: a generator's
    signature, which binds a call's arguments. tunables: the tunables a caller or the tuner
    sets (``init=True``). key: the parameters the cores are built from: every tunable, what a
    streamed operand's ``obj_shape=``, ``per=``, ``dtype=`` or ``when=`` names, and every
    ``param(array=True)``.
    """

    def __init__(self, name: str, params: dict[str, OperatorParam], members: tuple[Member, ...],
                 nullable: frozenset[str] = frozenset(), scalars: tuple[str, ...] = (),
                 signature: inspect.Signature | None = None) -> None:
        self.name = name
        self.params = params
        self.members = members
        self.nullable = nullable
        self.scalars = scalars
        self.signature = signature
        self.tunables = tuple(n for n, p in params.items() if p.tunable and p.init)
        named = {n for n, p in params.items() if p.array}
        for m in self.operands:
            if m.streamed:
                named |= _names(m.obj_dims) | _names(m.per or ())
                if isinstance(m.declared_dtype, OperatorParam):
                    named.add(m.declared_dtype.name)
                if m.when is not None:
                    named.add(m.when.name)
        self.key = tuple(n for n in params if n in named)

    @functools.cached_property
    def operands(self) -> tuple[Operand, ...]:
        return tuple(m for m in self.members if isinstance(m, Operand))

    @functools.cached_property
    def per_calls(self) -> tuple[PerCallMember, ...]:
        return tuple(m for m in self.members if isinstance(m, PerCallMember))

    def __repr__(self) -> str:
        return (f"Declaration({self.name!r}, params={list(self.params)}, "
                f"members={[m.name for m in self.members]}, key={self.key})")

    # ------------------------------------------------------------ reading
    @classmethod
    def from_class(cls, op_class: type) -> Declaration:
        """Read an operator class body (and its operator bases')."""
        bases = [c for c in reversed(op_class.__mro__) if "declaration" in vars(c) or c is op_class]
        params: dict[str, OperatorParam] = {}
        nullable: set[str] = set()
        for c in bases:
            annotations = vars(c).get("__annotations__", {})
            for name, value in vars(c).items():
                if isinstance(value, OperatorParam):
                    params[name] = value
                    if _optional(annotations.get(name)):
                        nullable.add(name)
                    else:
                        nullable.discard(name)
        members: dict[str, Member] = {}
        for c in reversed(bases):
            for name, value in vars(c).items():
                if isinstance(value, (Operand, PerCallMember)) and name not in members:
                    members[name] = value
        return cls(op_class.__name__, params, tuple(members.values()), frozenset(nullable))

    @classmethod
    def from_signature(cls, fn: Any) -> Declaration:
        """Read a design generator's signature: ``CompileTime[T]`` parameters, operand
        annotations (`In`, `Out`, `InOut`), keyword-only ``DispatchTime[T]`` values, and
        unmarked scalars (which may not have a default: it would be baked into the build)."""
        hints = typing.get_type_hints(fn, include_extras=True)
        sig = inspect.signature(fn)
        sig = sig.replace(parameters=[p.replace(annotation=hints.get(p.name, p.annotation))
                                      for p in sig.parameters.values()])
        params: dict[str, OperatorParam] = {}
        members: list[Member] = []
        scalars: list[str] = []
        nullable: set[str] = set()
        where = getattr(fn, "__qualname__", repr(fn))
        for p in sig.parameters.values():
            marker = marker_of(p.annotation)
            default = MISSING if p.default is inspect.Parameter.empty else p.default
            if marker is COMPILE_TIME:
                params[p.name] = OperatorParam(default=default, derive=None, array=True, repr=True,
                                               init=True, tunable=False, domain=None)
                params[p.name].__set_name__(fn, p.name)
                if _optional(marked_type(p.annotation)):
                    nullable.add(p.name)
            elif marker is DISPATCH_TIME:
                if p.kind is not inspect.Parameter.KEYWORD_ONLY:
                    raise TypeError(f"{where}: DispatchTime parameter {p.name!r} must be keyword-only "
                                    f"(put it after a bare * in the signature)")
                member = PerCallMember(marked_type(p.annotation), None, None)
                member.__set_name__(fn, p.name)
                members.append(member)
            elif marker is not None:
                operand = p.annotation if isinstance(p.annotation, Operand) else marker()
                operand.__set_name__(fn, p.name)
                members.append(operand)
            else:
                if default is not MISSING:
                    raise TypeError(
                        f"{where}: parameter {p.name!r} has a default but no marker, so the default "
                        f"would be baked into the build and a call's value ignored; annotate it "
                        f"CompileTime[T] (recompiles on change), DispatchTime[T] (runtime scalar, one "
                        f"compile many values), or In/Out/InOut (DMA tensor)")
                scalars.append(p.name)
        return cls(getattr(fn, "__name__", where), params, tuple(members), frozenset(nullable),
                   tuple(scalars), sig)

    # ------------------------------------------------------------ inference
    def infer(self, inputs: Mapping[str, Any], outputs: Sequence[Any] = (),
              **kwargs: Any) -> dict[str, Any]:
        """The parameters the operands' shapes give.

        inputs: the input shapes by operand name (an optional input's ``when=`` flag is true
        where it is named); outputs: the shapes of caller-supplied outputs, in declaration
        order; kwargs: construction arguments, which pin values and are checked for agreement.
        Returns the pinned and inferred parameters and the operand flags. Raises `TypeError`
        when the operands are not the declared ones, `ValueError` when a shape disagrees with
        the declaration or another operand.
        """
        operands = self.operands
        known = set(self.params).union(*(_names(m.dims) for m in operands))
        given = {k: v for k, v in kwargs.items() if k in known}
        given |= self._flags(inputs, given)
        present = {m.name for m in operands if m.when is None
                   or (not _unset(v := given.get(m.when.name, m.when.default)) and bool(v))}
        ins = [m for m in operands if m.fills and m.name in present]
        if [m.name for m in ins] != list(inputs):
            raise TypeError(f"{self.name} takes {len(ins)} operand(s) "
                            f"({', '.join(m.name for m in ins)}), got {len(inputs)}")
        if outputs:
            for m in operands:
                if not m.fills and m.when is not None and _unset(given.get(m.when.name, m.when.default)):
                    raise ValueError(f"{self.name}: {m.when.name} decides whether {m.name} is an output "
                                     f"and has no default; pass it explicitly")
        outs = [m for m in operands if not m.fills and m.name in present]
        if outputs and len(outputs) != len(outs):
            raise TypeError(f"{self.name} produces {len(outs)} output(s) "
                            f"({', '.join(m.name for m in outs)}), got {len(outputs)}")
        found: list[tuple[OperatorParam, int | None, str]] = []
        pairs = [(m, inputs[m.name]) for m in ins] + list(zip(outs, outputs))
        for m, shape in pairs:
            found += self._dims_of(m, tuple(int(s) for s in shape), given)
        for m, shape in zip(outs, outputs):
            if m.like is not None:
                like = tuple(inputs[m.like.name])
                if tuple(shape) != like:
                    raise ValueError(f"{self.name}: output {m.name} is {tuple(shape)}, but shaped like "
                                     f"{m.like.name}, {like}")
        bound = dict(given)
        origin = {k: "given" for k in given}
        for ref, value, where in found:
            if ref.name in bound and bound[ref.name] != value:
                raise ValueError(f"{self.name}: {ref.name} is {value} from {where} but "
                                 f"{bound[ref.name]} from {origin[ref.name]}")
            bound[ref.name] = value
            origin.setdefault(ref.name, where)
        return bound

    def _flags(self, inputs: Mapping[str, Any], given: dict[str, Any]) -> dict[str, bool]:
        """The ``when=`` flags the optional inputs' presence sets, checked against given ones."""
        flags: dict[str, bool] = {}
        for m in self.operands:
            if not m.fills or m.when is None:
                continue
            flag, has = m.when.name, m.name in inputs
            if flags.setdefault(flag, has) != has:
                raise TypeError(f"{self.name}: the operands {flag}= brings are given together")
            if flag in given and bool(given[flag]) != has:
                raise TypeError(f"{self.name}({flag}=True) takes {m.name}=" if not has else
                                f"{self.name}: {m.name}= is an operand only where {flag} is true")
        return flags

    def _dims_of(self, m: Operand, shape: tuple[int, ...],
                 given: Mapping[str, Any]) -> list[tuple[OperatorParam, int | None, str]]:
        """What one operand's shape says of each parameter its dims name."""
        found: list[tuple[OperatorParam, int | None, str]] = []
        dims = list(m.dims)
        at = next((i for i, d in enumerate(dims)
                   if isinstance(d, OperatorParam) and d.name in self.nullable), None)
        if at is not None:
            optional = dims.pop(at)
            if len(shape) == len(dims) + 1:
                found.append((optional, shape[at], f"{m.name}.shape[{at}]"))
                shape = shape[:at] + shape[at + 1:]
            elif len(shape) == len(dims):
                found.append((optional, None, f"{m.name} (rank {len(shape)})"))
            else:
                raise ValueError(f"{self.name}: operand {m.name} has rank {len(shape)}, declared {m!r}")
        expanded: list[Any] = []
        while dims:
            d = dims.pop(0)
            if not isinstance(d, Select):
                expanded.append(d)
                continue
            value = given.get(d.flag.name, d.flag.default)
            if _unset(value):
                raise ValueError(f"{self.name}: {d.flag.name} selects {m.name}'s shape and has no "
                                 f"default; pass it explicitly")
            dims[:0] = d.when_true if value else d.when_false
        if len(expanded) == 1 and len(shape) != 1:
            shape = (math.prod(shape),)  # a flat operand takes any rank: its dim is the count
        if len(shape) != len(expanded):
            raise ValueError(f"{self.name}: operand {m.name} has rank {len(shape)} {shape}, declared "
                             f"rank {len(expanded)} {m!r}")
        for i, (d, n) in enumerate(zip(expanded, shape)):
            if isinstance(d, OperatorParam):
                found.append((d, n, f"{m.name}.shape[{i}]"))
            elif int(d) != n:
                raise ValueError(f"{self.name}: operand {m.name}.shape[{i}] is {n}, declared {d}")
        return found
