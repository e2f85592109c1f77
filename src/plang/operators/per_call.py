"""Per-call expressions: `PerCall`, an integer the host gives each call, and `Affine`, an
integer expression in one of them.

``clamp(((v * scale + bias) >> down) * mul + add, lo, hi) % mod + post``: ``>>`` floors, a
bound of None is none, `mod` is a power of two or None, `post` is added after the wrap. A
linear one has ``down == 0`` and keeps its terms in `scale` and `bias`: ``(p + 1) * 64`` is
``Affine(p, 64, 64)``. Anything outside that closure (a comparison, another divisor, two
values) raises `TypeError`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping


def _power_of_two(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0 and n & (n - 1) == 0


class _Arith:
    """The arithmetic `PerCall` and `Affine` share; each subclass reads as an `Affine`
    through ``_as_affine()``."""

    _as_affine: Any

    def __add__(self, other: Any) -> Affine | int:
        return self._as_affine().plus(other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Affine | int:
        if isinstance(other, _Arith):
            return self._as_affine().plus(other._as_affine().times_int(-1))
        if isinstance(other, int) and not isinstance(other, bool):
            return self._as_affine().plus(-other)
        raise TypeError(f"({self}) - {other!r} is no per-call expression: subtract an integer")

    def __rsub__(self, other: Any) -> Affine | int:
        return self._as_affine().times_int(-1).plus(other)

    def __neg__(self) -> Affine | int:
        return self._as_affine().times_int(-1)

    def __mul__(self, other: Any) -> Affine | int:
        if not isinstance(other, int) or isinstance(other, bool):
            raise TypeError(f"({self}) * {other!r} is no per-call expression: multiply by an integer")
        return self._as_affine().times_int(other)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Affine | int:
        return self._as_affine().floordiv(other)

    def __mod__(self, other: Any) -> Affine | int:
        return self._as_affine().wrap(other)

    def _compare(self, other: Any):
        raise TypeError(f"({self}) compared with {other!r}: a per-call expression is no "
                        f"compile-time value; compare its evaluate()d value on the host")

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    def __bool__(self) -> bool:
        raise TypeError(f"({self}) has no truth value before a call gives its value")


class PerCall(_Arith):
    """An integer scalar given per call; integer arithmetic on one makes an `Affine`.

    `marker` says how a call gives it (``"plang.per_call"`` for an operator's `per_call`
    value, ``"plang.dispatch_time"`` for a `DispatchTime` parameter); `ssa` is its staged
    value once a run binds it (the call's integer).
    """

    def __init__(self, name: str, marker: Any, scalar_type: type) -> None:
        self.name, self.marker, self.scalar_type = name, marker, scalar_type
        self.ssa: Any = None

    def _as_affine(self) -> Affine:
        return Affine(self)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, PerCall) and (self.name, self.marker, self.scalar_type)
                == (other.name, other.marker, other.scalar_type))

    def __hash__(self) -> int:
        return hash((PerCall, self.name, self.marker))

    def __repr__(self) -> str:
        return f"PerCall({self.name!r}, {self.marker!r}, {self.scalar_type.__name__})"

    def __str__(self) -> str:
        return self.name


def _signed(tag: str, n: int) -> str:
    """A term of a symbol name: ``_x64`` / ``_xm2`` for a factor, ``_p64`` / ``_m1`` for a sum."""
    if tag == "x":
        return f"_x{n}" if n >= 0 else f"_xm{-n}"
    return f"_p{n}" if n >= 0 else f"_m{-n}"


@dataclass(frozen=True, eq=True)
class Affine(_Arith):
    """An integer expression in one per-call value v (see the module doc for the formula)."""

    value: PerCall
    scale: int = 1
    bias: int = 0
    down: int = 0
    mul: int = 1
    add: int = 0
    lo: int | None = None
    hi: int | None = None
    mod: int | None = None
    post: int = 0

    def __post_init__(self) -> None:
        if self.mod is not None and not _power_of_two(self.mod):
            raise ValueError(f"Affine(mod={self.mod}): a wrap is a power of two")

    def _as_affine(self) -> Affine:
        return self

    @property
    def clamped(self) -> bool:
        return self.lo is not None or self.hi is not None

    @property
    def linear(self) -> bool:
        """No floor, clamp or wrap: ``v * scale + bias``."""
        return self.down == 0 and not self.clamped and self.mod is None

    @property
    def name(self) -> str:
        """An identifier for the device symbol: ``p``, ``p_x64``, ``p_x64_p64``, ``p_m1``."""
        parts = [self.value.name]
        if self.scale != 1:
            parts.append(_signed("x", self.scale))
        if self.bias:
            parts.append(_signed("p", self.bias))
        if self.down:
            parts.append(f"_s{self.down}")
        if self.mul != 1:
            parts.append(_signed("x", self.mul))
        if self.add:
            parts.append(_signed("p", self.add))
        for tag, bound in (("lo", self.lo), ("hi", self.hi)):
            if bound is not None:
                parts.append(f"_{tag}{bound}" if bound >= 0 else f"_{tag}m{-bound}")
        if self.mod is not None:
            parts.append(f"_mod{self.mod}")
        if self.post:
            parts.append(_signed("p", self.post))
        return "".join(parts)

    def __str__(self) -> str:
        def plus(text: str, n: int) -> str:
            return f"{text} {'+' if n > 0 else '-'} {abs(n)}" if n else text

        text = self.value.name if self.scale == 1 else f"{self.value.name} * {self.scale}"
        text = plus(text, self.bias)
        if self.down:
            text = f"({text}) >> {self.down}"
        if self.mul != 1:
            text = f"({text}) * {self.mul}"
        text = plus(text, self.add)
        if self.clamped:
            text = f"clamp({text}, {self.lo}, {self.hi})"
        if self.mod is not None:
            text = f"({text}) % {self.mod}" + (f" + {self.post}" if self.post else "")
        return text

    # ------------------------------------------------------------------ closure
    def _simplified(self) -> Affine | int:
        if self.scale == 0 and self.down == 0 and self.mod is None:
            x = self.bias * self.mul + self.add
            x = x if self.lo is None else max(x, self.lo)
            return x if self.hi is None else min(x, self.hi)
        return self

    def plus(self, other: Any) -> Affine | int:
        """This expression plus an integer, or plus a linear one in the same value."""
        if isinstance(other, PerCall):
            other = Affine(other)
        if isinstance(other, Affine):
            if not (self.linear and other.linear and other.value == self.value):
                raise TypeError(f"({self}) + ({other}): only two linear expressions in one "
                                f"per-call value add")
            return dataclasses.replace(self, scale=self.scale + other.scale,
                                       bias=self.bias + other.bias)._simplified()
        if not isinstance(other, int) or isinstance(other, bool):
            raise TypeError(f"({self}) + {other!r} is no per-call expression: add an integer")
        if self.mod is not None:
            return dataclasses.replace(self, post=self.post + other)
        if self.linear:
            return dataclasses.replace(self, bias=self.bias + other)._simplified()
        return dataclasses.replace(
            self, add=self.add + other, lo=None if self.lo is None else self.lo + other,
            hi=None if self.hi is None else self.hi + other)._simplified()

    def times_int(self, k: int) -> Affine | int:
        """This expression times an integer (a clamp is carried through)."""
        if self.mod is not None:
            raise TypeError(f"({self}) * {k}: no expression scales after it wraps")
        if self.linear:
            return dataclasses.replace(self, scale=self.scale * k, bias=self.bias * k)._simplified()
        lo = None if self.lo is None else self.lo * k
        hi = None if self.hi is None else self.hi * k
        if k < 0:
            lo, hi = hi, lo
        return dataclasses.replace(self, mul=self.mul * k, add=self.add * k, lo=lo, hi=hi)._simplified()

    def floordiv(self, other: Any) -> Affine | int:
        """This expression floor-divided by a power of two, or by a linear one it is an
        integer multiple of (``(4 * n) // n`` is 4)."""
        if isinstance(other, (PerCall, Affine)):
            other = other._as_affine()
            if (self.linear and other.linear and other.value == self.value and other.scale
                    and self.scale % other.scale == 0
                    and self.bias == other.bias * (self.scale // other.scale)):
                return self.scale // other.scale
            raise TypeError(f"({self}) // ({other}): only a multiple of an expression divides by it")
        if not _power_of_two(other):
            raise TypeError(f"({self}) // {other!r}: a per-call expression floor-divides only by "
                            f"a power of two")
        if other == 1:
            return self
        if self.mod is not None:
            raise TypeError(f"({self}) // {other}: no expression divides after it wraps")
        if self.mul == 1 and self.add == 0:
            inner = dataclasses.replace(self, down=self.down + other.bit_length() - 1)
        elif self.mul % other == 0 and self.add % other == 0:
            inner = dataclasses.replace(self, mul=self.mul // other, add=self.add // other)
        else:
            raise TypeError(f"({self}) // {other}: the floor does not fold into one expression")
        return dataclasses.replace(inner, lo=None if self.lo is None else self.lo // other,
                                   hi=None if self.hi is None else self.hi // other)._simplified()

    def wrap(self, mod: Any) -> Affine | int:
        """This expression modulo a power of two (a ring's row)."""
        if not _power_of_two(mod):
            raise TypeError(f"({self}) % {mod!r}: a per-call expression wraps only at a power of two")
        if self.mod is None:
            return dataclasses.replace(self, mod=mod)
        if self.post == 0 and self.mod % mod == 0:
            return dataclasses.replace(self, mod=mod)
        raise TypeError(f"({self}) % {mod}: the wraps do not fold into one")

    # ------------------------------------------------------------------ use
    def affine(self) -> Affine:
        """This expression where only a linear one will do; `TypeError` if it floors, is
        clamped or wraps."""
        if not self.linear:
            raise TypeError(f"{self} is not linear in {self.value.name}")
        return self

    def clamp(self, lo: int | None = None, hi: int | None = None) -> Affine | int:
        """This expression held to ``[lo, hi]`` too, a bound of None none; held to a range it
        never reaches, it is that range's nearer bound."""
        if self.mod is not None:
            raise TypeError(f"no expression clamps ({self}) after it wraps")
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"{self} held to [{lo}, {hi}] holds no value")
        if lo is not None and self.hi is not None and self.hi < lo:
            return lo
        if hi is not None and self.lo is not None and self.lo > hi:
            return hi
        lo = self.lo if lo is None or (self.lo is not None and self.lo > lo) else lo
        hi = self.hi if hi is None or (self.hi is not None and self.hi < hi) else hi
        return dataclasses.replace(self, lo=lo, hi=hi)

    def evaluate(self, values: Mapping[str, int]) -> int:
        """Its value where `values` gives its per-call value by name."""
        v = int(values[self.value.name])
        x = ((self.scale * v + self.bias) >> self.down) * self.mul + self.add
        if self.lo is not None:
            x = max(x, self.lo)
        if self.hi is not None:
            x = min(x, self.hi)
        return x if self.mod is None else x % self.mod + self.post

    def stage(self) -> int:
        """Its value for the run that bound its per-call value (`PerCall.ssa`)."""
        if self.value.ssa is None:
            raise TypeError(f"{self.value.name} has no staged value outside the runtime "
                            f"sequence it is bound to")
        return self.evaluate({self.value.name: self.value.ssa})
