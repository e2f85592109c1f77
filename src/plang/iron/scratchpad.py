"""`ScratchpadParameter`: a named value the host writes per call and cores read. A design
that declares some takes their values per call, ``design(..., parameters={"n": 3})``; a core
reads the call's value with `read()`."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import state


class ScratchpadParameter:
    """A named runtime parameter communicated from host to cores."""

    def __init__(self, name: str, dtype: Any) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"ScratchpadParameter name must be a non-empty str, got {name!r}")
        dt = np.dtype(dtype)
        if dt == np.float32:
            raise TypeError("ScratchpadParameter: np.float32 is not supported")
        self.name, self.dtype = name, dt

    def read(self) -> Any:
        """This call's value (in a core function or the sequence body)."""
        values = state.current_run("ScratchpadParameter.read()").parameters
        if self.name not in values:
            raise ValueError(f"ScratchpadParameter {self.name!r} has no value in this call: pass "
                             f"parameters={{{self.name!r}: ...}}")
        return values[self.name]

    def value_of(self, given: Any) -> Any:
        """`given` as this parameter's dtype (an integer parameter refuses a fraction)."""
        if self.dtype.kind in "iu" and (isinstance(given, bool) or not float(given).is_integer()):
            raise TypeError(f"ScratchpadParameter {self.name!r} takes an integer, got {given!r}")
        return self.dtype.type(given)

    def __repr__(self) -> str:
        return f"ScratchpadParameter({self.name!r}, {self.dtype})"


def parameter_values(declared: list[ScratchpadParameter], given: dict | None, design: str) -> dict:
    """The call's values, checked against the parameters the design declares."""
    if given is None:
        return {}
    if not declared:
        raise TypeError(f"{design} declares no ScratchpadParameter, so it takes no parameters=")
    by_name = {p.name: p for p in declared}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        raise TypeError(f"{design} has no ScratchpadParameter {unknown}; it declares {sorted(by_name)}")
    return {k: by_name[k].value_of(v) for k, v in given.items()}
