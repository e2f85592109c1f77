"""`Node`: the immutable base of every IR object (types, expressions, statements, functions).

A node class declares each structural field once, as a class annotation, in constructor
order:

    @node
    class If(Stmt):
        cond: Expr
        then_body: Stmt
        else_body: Stmt | None = None
        return_vars: tuple[Var, ...] = ()

and `@node` derives `_fields`, the `__slots__` and, unless the class writes its own
`__init__` (to coerce or derive), a constructor `If(cond, then_body, else_body=None, return_vars=(),
span=None)` that stores a `tuple[...]` field as a tuple and a `Mapping[...]` field as a
read-only mapping. Inherited fields come first.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, NamedTuple

from .span import NO_SPAN, Span

_setattr = object.__setattr__


def freeze_attrs(attrs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only ordered copy of an attrs mapping."""
    return MappingProxyType(dict(attrs or {}))


_printer: Callable[..., str]


def register_printer(printer: Callable[..., str]) -> None:
    """Install the IR printer, `printer.python_print`, which `Node.__repr__` and `as_python`
    call. The printer imports every node module, so they reach it through this hook, set when
    `printer` is imported (`plang.ir` imports it), not through an import back (a cycle)."""
    global _printer
    _printer = printer


def as_python(n: Node, prefix: str = "pl", concise: bool = False, format: bool = True) -> str:
    """`n` printed as plang Python source (the registered printer; see `python_print`)."""
    return _printer(n, prefix, concise, format)


def node(cls: type) -> type:
    """Class decorator: rebuild `cls` with `_fields`, `__slots__` and (unless it writes its
    own) `__init__` derived from its field annotations.

    The class is rebuilt, like `dataclass(slots=True)` does, because slots must exist when a
    class is created, and a metaclass would slow every `isinstance` against node classes.
    """
    ns = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    anns = ns.get("__annotations__", {})
    own = [f for f in anns if not f.startswith("_") and not str(anns[f]).startswith("ClassVar")]
    base = cls.__bases__[0]
    inherited = base._fields
    fields = ns.setdefault("_fields", inherited + tuple(f for f in own if f not in inherited))
    defaults = ns["_defaults"] = {**base._defaults, **{f: ns.pop(f) for f in own if f in ns}}
    annotations = ns["_annotations"] = {**base._annotations, **{f: str(anns[f]) for f in own}}
    slotted = {s for k in base.__mro__ for s in k.__dict__.get("__slots__", ())}
    ns["__slots__"] = tuple(f for f in fields if f not in slotted)
    if "__init__" not in ns:
        ns["__init__"] = _make_init(cls.__name__, fields, annotations, defaults)
    new = type(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    return new


def _make_init(cls_name: str, fields: tuple[str, ...], anns: dict[str, str],
               defaults: dict[str, Any]) -> Any:
    """`__init__(self, <fields>, span=None)`, generated once per class (as fast as hand-written)."""
    params, body = ["self"], ["    _setattr(self, 'span', span or NO_SPAN)"]
    for f in fields:
        if f in defaults:
            params.append(f"{f}=_defaults[{f!r}]")
        elif len(params) > 1 and "=" in params[-1]:
            raise TypeError(f"{cls_name}: field {f!r} without a default follows one with a default")
        else:
            params.append(f)
        ann = anns.get(f, "")
        value = f"tuple({f})" if ann.startswith("tuple[") else \
            f"freeze_attrs({f})" if ann.startswith("Mapping[") else f
        body.append(f"    _setattr(self, {f!r}, {value})")
    env = {"_setattr": _setattr, "NO_SPAN": NO_SPAN, "freeze_attrs": freeze_attrs, "_defaults": defaults}
    exec(f"def __init__({', '.join(params + ['span=None'])}):\n" + "\n".join(body), env)
    init = env["__init__"]
    init.__qualname__ = f"{cls_name}.__init__"
    return init


class Node:
    """Immutable IR node; `span` is never structural.

    `replace(**changes)` builds the changed node through its constructor, so whatever the
    constructor derives (a scalar expression's type, a constant's coercion, a tile's
    normalised valid shape) is derived again from the new fields.
    """

    __slots__ = ("span",)
    _fields: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}
    _annotations: dict[str, str] = {}
    _rederived: tuple[str, ...] = ()  # fields the constructor recomputes unless replace gives them

    def __init__(self, span: Span | None = None) -> None:
        _setattr(self, "span", span or NO_SPAN)

    def _set(self, span: Span | None, **fields: Any) -> None:
        _setattr(self, "span", span or NO_SPAN)
        for k, v in fields.items():
            _setattr(self, k, v)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({key}=...)")

    def fields(self) -> Iterator[tuple[str, Any]]:
        for f in self._fields:
            yield f, getattr(self, f)

    def replace(self, **changes: Any) -> Node:
        """The node with `changes` applied, rebuilt through the constructor."""
        cls = type(self)
        ctor = _CTOR.get(cls) or _ctor(cls)
        kwargs: dict[str, Any] = {}
        for param, field in ctor.params:
            if field in changes:
                value = changes.pop(field)
            elif field in cls._rederived:
                continue
            else:
                value = getattr(self, field)
            kwargs[param] = value.dtype if param == "dtype" and field == "type" else value
        span = changes.pop("span", self.span)
        if changes:
            derived = sorted(set(changes) & set(cls._fields))
            raise TypeError(f"{cls.__name__}: {derived} derived by the constructor" if derived else
                            f"{cls.__name__} has no field(s) {sorted(changes)}")
        if ctor.takes_span:
            kwargs["span"] = span
        return cls(**kwargs)

    def as_python(self, prefix: str = "pl", concise: bool = False, format: bool = True) -> str:
        """This node as plang Python source: `prefix` is the name plang is imported as,
        `concise` drops the annotations of assignments (see `plang.ir.python_print`)."""
        return _printer(self, prefix, concise, format)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {_printer(self)}>"


class _Ctor(NamedTuple):
    params: tuple[tuple[str, str], ...]  # (constructor parameter, the field it takes)
    takes_span: bool


_CTOR: dict[type, _Ctor] = {}


def _ctor(cls: type) -> _Ctor:
    """How `replace` calls `cls`: a parameter is named as its field (`tuple_` for `tuple`),
    or `dtype` for a `type` field."""
    names = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "span")]
    pairs = []
    for p in names:
        field = p if p in cls._fields else p.rstrip("_")
        if field not in cls._fields and p == "dtype" and "type" in cls._fields:
            field = "type"
        if field not in cls._fields:
            raise TypeError(f"{cls.__name__}.__init__ parameter {p!r} names no field")
        pairs.append((p, field))
    ctor = _CTOR[cls] = _Ctor(tuple(pairs), "span" in inspect.signature(cls.__init__).parameters)
    return ctor
