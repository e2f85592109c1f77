"""Project rules checked by the test suite: ruff is clean and no module grows past ~600 lines."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "src" / "plang").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600}
    assert not long, f"split these modules by concept: {long}"
