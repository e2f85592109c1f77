"""docs/operators.md opens with the seed's example and names every public name of
`plang.operators` (and of its ready operators) as `plang.operators.<name>` or in code."""

import re
from pathlib import Path

import plang.operators as ops
import plang.operators.kernels as kernels

PAGE = Path(__file__).resolve().parents[2] / "docs" / "operators.md"


def test_every_public_name_is_on_the_page():
    text = PAGE.read_text()
    names = ops.__all__ + kernels.__all__
    missing = [n for n in names if not re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text)]
    assert not missing, f"not in docs/operators.md: {missing}"


def test_the_page_opens_with_the_seed_example():
    first = re.search(r"```python\n(.*?)```\n\n```text output\n(.*?)```", PAGE.read_text(), re.S)
    assert "class Scale(Operator):" in first.group(1) and "Device(clusters=2)" in first.group(1)
    assert first.group(2) == "Scale(M=1024, factor=1.0, tile=None)\nScale(M=1024, factor=1.0, tile=16)\n"
