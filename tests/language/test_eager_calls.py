"""Every `pl.*` wrapper called eagerly (outside a parse) raises EagerCallError naming itself."""

from __future__ import annotations

import enum
import inspect

import pytest
import torch

import plang as pl
from plang.language.ops import UNIFIED_NAMES

EAGER_OK = {
    # entry points and compile-time helpers that are meant to run at the Python prompt
    "function", "program", "inline", "parse", "loads", "parse_program", "loads_program", "jit", "compile",
    "dynamic", "const", "split", "cross_core_slot",
    # the reference's top-level logging and checks (`import pypto`), host-side by nature
    "set_log_level", "get_log_level", "log_debug", "log_info", "log_warn", "log_error", "log_fatal",
    "log_event", "check", "internal_check", "internal_check_span",
}
NAMESPACES = ("tile", "tensor", "system", "array", "scalar")


def _dsl_callables() -> list[tuple[str, object]]:
    """Every public function on `pl` and on its op namespaces, minus the eager-ok ones."""
    out = []
    for name in sorted(dir(pl)):
        obj = getattr(pl, name)
        if name.startswith("_") or name in EAGER_OK or not callable(obj) or inspect.isclass(obj):
            continue
        if isinstance(obj, (enum.Enum, pl.DataType)):
            continue
        out.append((f"pl.{name}", obj))
    for ns in NAMESPACES:
        out += [(f"pl.{ns}.{op}", getattr(getattr(pl, ns), op)) for op in dir(getattr(pl, ns))]
    return out


CALLABLES = _dsl_callables()


def test_the_surface_is_enumerated():
    names = {n for n, _ in CALLABLES}
    # the unified wrappers, the parser constructs and the explicit namespaces are all covered
    assert {f"pl.{n}" for n in UNIFIED_NAMES} <= names
    assert {"pl.range", "pl.at", "pl.submit", "pl.yield_", "pl.static_assert", "pl.tile.load",
            "pl.tensor.add", "pl.system.syncall", "pl.array.create"} <= names
    assert all(callable(getattr(pl, n)) for n in EAGER_OK)


@pytest.mark.parametrize("name, fn", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_eager_call_raises_clear_error(name, fn):
    with pytest.raises(pl.EagerCallError) as info:
        fn(torch.zeros(4, 4), [0, 0], [4, 4])
    assert str(info.value).startswith(f"{name} only works inside a DSL function")


def test_dsl_helpers_called_eagerly():
    @pl.inline
    def twice(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return pl.add(x, x)

    with pytest.raises(pl.EagerCallError, match="@pl.inline twice only works when called inside a DSL"):
        twice(torch.zeros(4))
    with pytest.raises(pl.EagerCallError, match="method; decorate its class with @pl.program"):
        _Undecorated.k(None, torch.zeros(4))
    with pytest.raises(pl.EagerCallError, match="pl.range only works inside a DSL function"):
        for _ in pl.range(4):
            pass


class _Undecorated:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return a
