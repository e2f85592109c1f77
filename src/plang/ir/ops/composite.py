"""Elementwise ops defined by their scalar semantics: one entry each.

An entry names the op, says what it computes, and gives its meaning composed from the
primitive elementwise ops (`PRIMITIVES`): `lambda m, x: m.mul(x, m.sigmoid(x))`. That one
entry registers `tensor.<name>` and `tile.<name>` (float dtypes, `Pattern.ELEMENTWISE`), so
the op parses as `pl.<name>`, type-checks, converts from tensor to tile form, fuses like any
elementwise op, lowers (codegen evaluates the semantics on vector chunks) and has a torch
reference (the torch codegen evaluates it on torch tensors), with no other file touched.
The semantics are checked when the op is registered: only primitives, right arity.
"""

from __future__ import annotations

from typing import Any, Callable

from .common import FLOATS, P, family
from .elementwise import unary
from .registry import Pattern

UNARY_PRIMITIVES = ("exp", "log", "sqrt", "rsqrt", "recip", "tanh", "sigmoid", "sin", "cos", "neg", "abs")
BINARY_PRIMITIVES = ("add", "sub", "mul", "div", "maximum", "minimum")
PRIMITIVES = UNARY_PRIMITIVES + BINARY_PRIMITIVES + ("const",)
"""What a semantics function may call on its `m`: `m.const(v)` is a float constant."""


#: name -> (what it computes, semantics(m, x))
COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "silu": ("SiLU (swish) x * sigmoid(x)", lambda m, x: m.mul(x, m.sigmoid(x))),
    "softplus": ("softplus log(1 + exp(x)), as max(x, 0) + log(1 + exp(-|x|)) (no overflow)",
                 lambda m, x: m.add(m.maximum(x, m.const(0.0)),
                                    m.log(m.add(m.exp(m.neg(m.abs(x))), m.const(1.0))))),
}


class _Checker:
    """A stand-in `m` that accepts the primitives and nothing else."""

    def __getattr__(self, name: str) -> Callable[..., str]:
        if name not in PRIMITIVES:
            raise AttributeError(name)
        arity = 2 if name in BINARY_PRIMITIVES else 1

        def call(*args: Any) -> str:
            if len(args) != arity:
                raise TypeError(f"m.{name} takes {arity} operand(s), got {len(args)}")
            return "value"

        return call


def _check(name: str, semantics: Callable[..., Any]) -> None:
    try:
        semantics(_Checker(), "x")
    except (AttributeError, TypeError) as e:
        raise ValueError(f"composite op {name!r}: its semantics may only call the primitives "
                         f"{', '.join(PRIMITIVES)} ({e})") from None


def _register_all() -> None:
    for name, (what, semantics) in COMPOSITES.items():
        _check(name, semantics)
        family(name, [P("input", "X")], unary(FLOATS), unit="vector", pattern=Pattern.ELEMENTWISE,
               semantics=semantics, doc=f"Elementwise {what}.")


_register_all()
