"""Helpers for pass tests: parse DSL source snippets and compare pass output structurally."""

from __future__ import annotations

import textwrap

import plang as pl
from plang import passes
from plang.ir import Program, assert_structural_equal

HEADER = "import plang as pl\n\n"


def parse(src: str) -> Program:
    return pl.parse(HEADER + textwrap.dedent(src))


def check_pass(pass_name: str, before: str, after: str, verify: tuple[str, ...] = ()) -> Program:
    """Run the pass named `pass_name` on `before`; assert the result equals `after`.

    The output is also printed and re-parsed (the dump instrument's contract) and the
    `verify` properties are checked on it.
    """
    out = getattr(passes, pass_name)()(parse(before))
    assert_structural_equal(out, parse(after))
    assert_structural_equal(pl.parse(out.as_python()), out)
    for prop in verify:
        passes.get_property(prop).verify(out)
    return out


def line_of(src: str, text: str) -> int:
    """The line number, in the program `parse(src)` reads, of the first line containing `text`."""
    lines = (HEADER + textwrap.dedent(src)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)
