"""Round-trip corpus: parse → print → parse is structurally equal, and printing is a fixpoint."""

from __future__ import annotations

import pytest

import plang as pl
from plang.ir import assert_structural_equal

from .corpus import CORPUS


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 40
    assert len({name for name, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("source", [s for _, s in CORPUS], ids=[n for n, _ in CORPUS])
def test_roundtrip(source):
    first = pl.parse(source)
    text = first.as_python()
    second = pl.parse(text)
    assert_structural_equal(first, second)
    assert second.as_python() == text


@pytest.mark.parametrize("style", [{"concise": True}, {"prefix": "T"}], ids=["concise", "prefix"])
@pytest.mark.parametrize("source", [s for _, s in CORPUS], ids=[n for n, _ in CORPUS])
def test_concise_and_prefixed_prints_parse_back(source, style):
    first = pl.parse(source)
    assert_structural_equal(first, pl.parse(first.as_python(**style)))
