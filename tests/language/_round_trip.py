"""Shared by the parser tests: parse DSL source, print it, parse the print back."""

from __future__ import annotations

import textwrap

import plang as pl
from plang.ir import assert_structural_equal


def round_trip(source: str):
    """(the parsed program, its printed text), checking print -> parse is structurally equal
    and printing is a fixpoint. `source` may leave out `import plang as pl`."""
    source = textwrap.dedent(source)
    if "import plang as pl" not in source:
        source = "import plang as pl\n" + source
    first = pl.parse(source)
    return first, text_round_trip(first)


def text_round_trip(program) -> str:
    """`program`'s printed text, checked to parse back equal and to print the same again."""
    text = program.as_python()
    again = pl.parse(text)
    assert_structural_equal(again, program)
    assert again.as_python() == text
    return text
