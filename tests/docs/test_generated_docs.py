"""The registry-generated docs (op catalog, pass reference) match the live registries."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def _first_difference(committed: str, expected: str) -> str:
    for i, (a, b) in enumerate(zip(committed.splitlines(), expected.splitlines()), 1):
        if a != b:
            return f"first difference at line {i}:\n  committed: {a}\n  registry:  {b}"
    return "the files differ in length"


def test_op_catalog_matches_registry():
    expected = gen.op_catalog() + "\n"
    committed = gen.CATALOG.read_text()
    assert committed == expected, (
        f"docs/op-catalog.md disagrees with the op registry; regenerate it with "
        f"`{gen.COMMAND}`. {_first_difference(committed, expected)}")


def test_pass_reference_matches_registry():
    committed = gen.PASSES_DOC.read_text()
    expected = gen.passes_doc(committed)
    assert committed == expected, (
        f"the generated pass section of docs/ir-and-passes.md disagrees with plang.passes; "
        f"regenerate it with `{gen.COMMAND}`. {_first_difference(committed, expected)}")


def test_catalog_lists_every_op_once():
    from plang.ir.ops import REGISTRY

    text = gen.op_catalog()
    for op in REGISTRY.values():
        assert text.count(f"| `{op.spelling}` |") == 1, op.name


def test_pass_reference_covers_every_pass():
    from plang.passes import PASSES

    text = gen.pass_reference()
    for name in PASSES:
        assert f"{name}" in text, name


def test_stale_catalog_is_reported(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "op-catalog.md"
    stale.write_text(gen.op_catalog().replace("Elementwise addition", "Elementwise adding") + "\n")
    passes = tmp_path / "ir-and-passes.md"
    passes.write_text(gen.PASSES_DOC.read_text())
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "CATALOG", stale)
    monkeypatch.setattr(gen, "PASSES_DOC", passes)
    assert gen.main(["--check"]) == 1
    assert "op-catalog.md is out of date; run `python tools/gen_docs.py`" in capsys.readouterr().out


def test_missing_markers_are_an_error():
    with pytest.raises(ValueError, match="markers"):
        gen.passes_doc("# no markers here\n")
