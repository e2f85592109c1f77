"""The IR dump instrument: `NN_PassName.py` after every pass, each re-parsable to the IR it
shows."""

from __future__ import annotations

from pathlib import Path

import pytest

import plang as pl
from plang.ir import assert_structural_equal
from plang.passes import Instrument, PassManager

PROGRAMS = Path(__file__).parent / "programs"


def _check_dumps(tmp_path: Path, name: str, stop_after: str | None) -> None:
    prog = pl.parse((PROGRAMS / f"{name}.py").read_text())
    stages: list = []

    class Keep(Instrument):
        def after_pass(self, pass_, program, held):
            stages.append((pass_.name, program))

    PassManager(dump_dir=tmp_path, instruments=[Keep()], stop_after=stop_after).run(prog)
    dumps = sorted(tmp_path.glob("*.py"))
    expected = ["00_Input.py"] + [f"{i + 1:02d}_{n}.py" for i, (n, _) in enumerate(stages)]
    assert [p.name for p in dumps] == expected
    assert_structural_equal(pl.parse(dumps[0].read_text()), prog)
    for dump, (_, program) in zip(dumps[1:], stages):
        assert_structural_equal(pl.parse(dump.read_text()), program)


@pytest.mark.parametrize("name", ["softmax", "rmsnorm", "elementwise"])
def test_front_half_dumps_reparse_to_the_ir_they_show(tmp_path: Path, name: str):
    _check_dumps(tmp_path, name, stop_after="FlattenCallExpr")


def test_full_pipeline_dumps_reparse_to_the_ir_they_show(tmp_path: Path):
    _check_dumps(tmp_path, "softmax", stop_after=None)
