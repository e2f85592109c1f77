"""`plang.ir.serialize` / `deserialize`: every corpus program, as parsed and after the whole
pass pipeline, comes back structurally equal, sharing its variables as the original does."""

from __future__ import annotations

from pathlib import Path

import pytest

import plang as pl
from plang import ir
from plang.passes import PassManager

PROGRAMS = sorted((Path(__file__).resolve().parents[1] / "passes" / "programs").glob("*.py"))


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_programs_round_trip(path: Path) -> None:
    program = pl.parse(path.read_text(), filename=str(path))
    for stage in (program, PassManager().run(program)):
        data = ir.serialize(stage)
        assert isinstance(data, bytes)
        restored = ir.deserialize(data)
        ir.assert_structural_equal(restored, stage)
        assert restored.as_python() == stage.as_python()


def test_variables_stay_shared() -> None:
    fn = pl.parse("""
import plang as pl

@pl.function
def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
    return y
""")
    restored = ir.deserialize(ir.serialize(fn))
    call = restored.body.stmts[0].value
    assert call.args[0] is call.args[1] is restored.params[0]


def test_garbage_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not serialized plang IR"):
        ir.deserialize(b"not ir")
