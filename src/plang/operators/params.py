"""The words an operator's class body declares its values with.

``M: int = param()`` is a compile-time parameter, ``tile: int = tunable()`` one a tuner may
choose, and ``n = per_call(np.int32)`` a value that may change every call. Each stays the
class attribute it was written as, so ``In(M, K)`` captures ``M`` itself and ``GEMM.M`` names
the parameter; on an instance, ``op.M`` is the value, held in the instance's own ``__dict__``.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

import numpy as np

from .per_call import PerCall


class _Missing:
    """The default of a required parameter."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self):
        return (_Missing, ())


MISSING: Any = _Missing()


class OperatorParam:
    """What `param()` and `tunable()` return: a parameter of its class.

    default: the value when the caller gives none, a function of the operator computing it,
    or `MISSING` for a required argument (a tunable's starting value, None for one `resolve`
    fills). derive: a function of the operator a given value must equal, and the value when
    none is given; or None. array: the cores read it, though no operand's shape names it.
    repr: it is in the operator's repr. init: it is a constructor argument. tunable: a tuner
    may choose it. domain: a tunable's search space, or None. name / owner: set when the class
    body binds it.
    """

    def __init__(self, *, default, derive, array, repr, init, tunable, domain):
        self.default = default
        self.derive = derive
        self.array = array
        self.repr = repr
        self.init = init
        self.tunable = tunable
        self.domain = domain
        self.name = ""
        self.owner: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.owner = name, owner

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        # An operator holds every parameter in its __dict__; only a layout() view lacks some.
        key = getattr(obj.declaration, "key", ())
        raise AttributeError(
            f"{type(obj).__name__}.{self.name} is not part of the cores' layout; a build reads "
            f"only the key's parameters {list(key)} (declare it param(array=True) to read it)")

    def computes(self) -> bool:
        """Its value comes from a function of the operator (a derive or a function default)."""
        return self.derive is not None or is_function(self.default)

    def __repr__(self) -> str:
        return self.name or ("tunable()" if self.tunable else "param()")


def is_function(value: Any) -> bool:
    """A default that is a function of the operator: a ``lambda`` or ``def`` (or a partial)."""
    return isinstance(value, (types.FunctionType, functools.partial))


def param(*, default: Any = MISSING, derive: Callable[[Any], Any] | None = None,
          array: bool = False, repr: bool = True, init: bool = True) -> Any:
    """Declare a compile-time parameter: the caller gives it, or the operands' shapes infer it.

    default: the value when neither the caller nor an operand gives one; a ``lambda`` or
    ``def`` is a function of the operator computing it, anything else (a type included) is
    the value. derive: a function of the operator, the value when none is given and what a
    given one must equal. array: the cores read it (a kernel scalar, a flag the build branches
    on) though no operand's shape, dtype or presence names it. Raises `TypeError` when both
    `default` and `derive` are given, or `default` is a list, dict or set.
    """
    if default is not MISSING and derive is not None:
        raise TypeError("param(default=, derive=): give one, not both")
    if isinstance(default, (list, dict, set)):
        raise TypeError(f"param(default={default!r}) would be shared by every instance; "
                        f"give default=lambda op: {default!r}")
    return OperatorParam(default=default, derive=derive, array=array, repr=repr, init=init,
                         tunable=False, domain=None)


def tunable(*, default: Any = None, domain: Any = None, repr: bool = True,
            init: bool = True) -> Any:
    """Declare a compile-time parameter a tuner may search; `resolve` fills it for the device
    when the caller does not, and the cores always read it.

    domain: the values a tuner searches: a tuple, an ``Enum`` class, or a function
    ``(op, dev, start) -> tuple`` such as `widths`; None is not searched. With
    ``init=False`` it is no constructor argument (a value `resolve` computes, or a subclass's
    fixed value of an inherited tunable).
    """
    if not (domain is None or isinstance(domain, tuple)
            or (isinstance(domain, type) and issubclass(domain, Enum)) or is_function(domain)):
        raise TypeError(f"tunable(domain={domain!r}): give a tuple, an Enum or a function "
                        f"(op, dev, start) -> tuple")
    return OperatorParam(default=default, derive=None, array=True, repr=repr, init=init,
                         tunable=True, domain=domain)


def widths(op: Any, dev: Any, start: int | None) -> tuple[int, ...]:
    """A tunable domain: the powers of two from ``max(1, start // 4)`` to ``start * 4``
    around the value `resolve` picks (8 to 64 where it picks none); what does not fit the
    device is then rejected by the operator's `compatible()` or by the build."""
    if start is None:
        return (8, 16, 32, 64)
    lo, hi = max(1, int(start) // 4), max(1, int(start) * 4)
    return tuple(1 << k for k in range(lo.bit_length() - 1, hi.bit_length()) if lo <= 1 << k <= hi)


@dataclass(frozen=True)
class Select:
    """A shape chosen by a flag the caller gives or defaults, never inferred:
    ``Select(b_col_maj, (N, K), (K, N))``."""

    flag: OperatorParam
    when_true: tuple
    when_false: tuple

    def branch(self, op: Any) -> tuple:
        """The dimensions the flag picks on `op`."""
        flag = getattr(op, self.flag.name)
        if flag is None:
            raise ValueError(f"{self.flag.name} is None; a Select() on it needs a resolved operator")
        return self.when_true if flag else self.when_false


class PerCallMember:
    """What `per_call()` returns: a value the cores read that may change every call.

    On an operator it reads as its value where a `derive` computes it once per build, else as
    the `PerCall` the call supplies (arithmetic on it makes an `Affine`).
    """

    fills = False
    streamed = False

    def __init__(self, dtype: Any, derive: Callable[[Any], Any] | None,
                 bounds: OperatorParam | None) -> None:
        self.dtype = np.dtype(dtype)
        self.derive = derive
        self.bounds = bounds
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        return self if obj is None else self.of(obj)

    @property
    def given_per_call(self) -> bool:
        """No build fixes it: each call gives it."""
        return self.derive is None

    def of(self, op: Any) -> Any:
        """What this value reads as on `op`: the derived integer, or the per-call variable."""
        if self.derive is not None:
            return int(self.derive(op))
        return PerCall(self.name, "plang.per_call", self.dtype.type)

    def check(self, op: Any, value: int) -> int:
        """`value` as this call's integer, range-checked against its `bounds`."""
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{type(op).__name__}: {self.name}= takes an integer, got {value!r}")
        value = int(value)
        info = np.iinfo(self.dtype)
        if not info.min <= value <= info.max:
            raise ValueError(f"{type(op).__name__}: {self.name}={value} does not fit {self.dtype.name}")
        if self.bounds is not None:
            bound = getattr(op, self.bounds.name)
            if not 0 <= value <= bound:
                raise ValueError(f"{type(op).__name__}: {self.name}={value} exceeds "
                                 f"{self.bounds.name}={bound}")
        return value

    def __repr__(self) -> str:
        return f"per_call({self.dtype.name})" if not self.name else self.name


def per_call(dtype: Any = np.int32, *, derive: Callable[[Any], Any] | None = None,
             bounds: OperatorParam | None = None) -> Any:
    """Declare a value the cores read that may change every call without a rebuild.

    A value no build fixes (no `derive`) is given every call as a keyword of the operator's
    call and reaches the kernel as a runtime scalar. derive: a function of the operator
    computing it once per build. bounds: a ``param()`` this value bounds per call
    (``valid = per_call(bounds=M)``: each call's value is in ``[0, M]``).
    """
    if np.dtype(dtype).kind not in "iu":
        raise TypeError(f"per_call({np.dtype(dtype).name}): a per-call value is an integer, "
                        f"since the scratchpad encoding zeroes the top two bits of a word")
    if derive is not None and bounds is not None:
        raise TypeError("per_call(derive=, bounds=): give one, not both")
    return PerCallMember(dtype, derive, bounds)
