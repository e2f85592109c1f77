"""tools/reference_tests/run.py runs the reference's system tests on plang: a case written
for the reference's harness (its imports, `PTOTestCase`, platforms) passes when the
program's outputs match its golden, fails when they do not, and A5 cases are skipped."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASE = '''
import pypto.language as pl
import pytest
import torch
from harness.core.harness import PLATFORMS, DataType, PTOTestCase, TensorSpec

T = pl.Tensor[[16, 16], pl.FP32]


class AddCase(PTOTestCase):
    def __init__(self, golden_offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.golden_offset = golden_offset

    def get_name(self):
        return "add"

    def define_tensors(self):
        return [TensorSpec("a", [16, 16], DataType.FP32, init_value=torch.randn),
                TensorSpec("b", [16, 16], DataType.FP32, init_value=2.0),
                TensorSpec("c", [16, 16], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Add:
            @pl.function(type=pl.FunctionType.InCore)
            def add(self, a: T, b: T, c: pl.Out[T]) -> T:
                return pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: T, b: T, c: pl.Out[T]) -> T:
                return self.add(a, b, c)

        return Add

    def compute_expected(self, tensors, params=None):
        tensors["c"][:] = tensors["a"] + tensors["b"] + self.golden_offset


class TestAdd:
    @pytest.mark.parametrize("platform", PLATFORMS)
    def test_add(self, test_runner, platform):
        result = test_runner.run(AddCase(platform=platform))
        assert result.passed, result.error

    def test_a_wrong_golden_fails(self, test_runner):
        result = test_runner.run(AddCase(golden_offset=1.0))
        assert not result.passed and "differs from the golden" in result.error
'''


def test_a_reference_case_runs_on_plang(tmp_path):
    st = tmp_path / "reference" / "tests" / "st"
    (st / "runtime").mkdir(parents=True)
    (st / "runtime" / "test_add.py").write_text(textwrap.dedent(CASE))
    (st / "conftest.py").write_text("raise ImportError('the reference conftest must be replaced')\n")
    (st / "harness").mkdir()
    (st / "harness" / "__init__.py").write_text("raise ImportError('the harness must be replaced')\n")
    (tmp_path / "reference" / "examples").mkdir()
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "reference_tests" / "run.py"),
                          str(tmp_path / "reference"), "--work", str(tmp_path / "work"), "runtime", "-q"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed, 3 deselected" in run.stdout  # the A5 variants and a2a3sim (same chip as a2a3)
    renamed = tmp_path / "work" / "tests" / "st" / "runtime" / "test_add.py"
    assert "import plang.language as pl" in renamed.read_text()
