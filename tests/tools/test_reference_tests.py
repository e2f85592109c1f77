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


PAGE = '''# A page

<!-- doctest: setup -->
```python
import pypto.language as pl
import torch
```

<!-- doctest: run -->
```python
@pl.jit
def double(a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(a, WANT)
    return out

a, out = torch.randn(16, 16), torch.zeros(16, 16)
double(a, out)
assert torch.equal(out, 2 * a), "not doubled"
```
'''

RUNNER = '''
"""A stand-in for the reference's manual runner: setup + each run block, one process each."""
import re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- doctest: (setup|run) -->\\n```python\\n(.*?)```", re.S)
failed = 0
for page in sorted((ROOT / "docs").rglob("*.md")):
    blocks = BLOCK.findall(page.read_text())
    setup = "".join(code for kind, code in blocks if kind == "setup")
    for k, (kind, code) in enumerate(blocks):
        if kind == "run":
            script = ROOT / f"block_{k}.py"  # a file: plang reads the kernels' source
            script.write_text(setup + code)
            failed += subprocess.run([sys.executable, str(script)], cwd=ROOT).returncode != 0
sys.exit(failed)
'''


def _manual(tmp_path, want: str) -> subprocess.CompletedProcess:
    ref = tmp_path / "reference"
    for part in ("tests/st", "examples", "tests/docs", "docs/en/user"):
        (ref / part).mkdir(parents=True, exist_ok=True)
    (ref / "tests" / "docs" / "run_doc_examples.py").write_text(RUNNER)
    (ref / "docs" / "en" / "user" / "page.md").write_text(PAGE.replace("WANT", want))
    return subprocess.run([sys.executable, str(ROOT / "tools" / "reference_tests" / "run.py"), str(ref),
                           "--work", str(tmp_path / "work"), "--docs"],
                          capture_output=True, text=True, timeout=300)


def test_the_reference_manual_runs_on_plang(tmp_path):
    run = _manual(tmp_path, "2.0")
    assert run.returncode == 0, run.stdout + run.stderr
    page = tmp_path / "work" / "docs" / "en" / "user" / "page.md"
    assert "import plang.language as pl" in page.read_text()


def test_a_wrong_manual_block_fails(tmp_path):
    run = _manual(tmp_path, "3.0")
    assert run.returncode == 1 and "not doubled" in run.stderr


DEVICES = '''
def test_devices(device_ids):
    assert device_ids == [0, 1, 2, 3, 8]
'''


def test_device_ids_are_read_as_the_reference_reads_them(tmp_path):
    """`--device 0-3,8` gives a distributed case the ids 0..3 and 8; `--device x` is a usage error."""
    st = tmp_path / "reference" / "tests" / "st"
    (st / "distributed").mkdir(parents=True)
    (st / "distributed" / "test_devices.py").write_text(DEVICES)
    (tmp_path / "reference" / "examples").mkdir()
    run_py = [sys.executable, str(ROOT / "tools" / "reference_tests" / "run.py"), str(tmp_path / "reference"),
              "--work", str(tmp_path / "work"), "distributed", "-q", "-p", "no:cacheprovider"]
    run = subprocess.run([*run_py, "--device", "0-3,8"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
    run = subprocess.run([*run_py, "--device", "0,x"], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "--device: 'x' is not an id or a range of ids" in run.stdout + run.stderr
