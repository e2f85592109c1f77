# ruff: noqa: E501  (DSL source text)
"""Reference names with no CPU meaning raise UnsupportedConstructError at the user's line;
the index forms of gather / scatter take a positional axis."""

from __future__ import annotations

import pytest

import plang as pl
from plang.language.ops import ASCEND_ONLY

from .test_diagnostics import check


@pytest.mark.parametrize("name", sorted(ASCEND_ONLY))
def test_ascend_only_names_are_unsupported_constructs(name):
    err = check(f"y = pl.{name}(t)\nreturn a", pl.UnsupportedConstructError,
                f"pl.{name} ({ASCEND_ONLY[name]}) is Ascend-only machinery and is not available on the CPU backend",
                f"pl.{name}(t)")
    assert err.code == "PL400"


def test_eager_call_of_an_ascend_only_name():
    with pytest.raises(pl.EagerCallError, match="pl.reserve_buffer only works inside a DSL function"):
        pl.reserve_buffer(name="buf", size=1024)
