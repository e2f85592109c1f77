"""Every script under examples/ runs on the default CPU platform and checks itself against torch."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(script: Path, tmp_path: Path):
    env = {**os.environ, "PLANG_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
    assert "OK" in done.stdout, f"{script.name} printed no checked result:\n{done.stdout}"


def test_examples_are_numbered_without_gaps():
    numbers = [int(p.name[:2]) for p in EXAMPLES]
    assert numbers == list(range(1, len(numbers) + 1))
