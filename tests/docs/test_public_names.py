"""Every public `pl.*` name is mentioned (as `pl.<name>` or `plang.<name>`) somewhere in docs/
(the op catalog counts)."""

import re
import types
from pathlib import Path

import plang

DOCS = Path(__file__).resolve().parents[2] / "docs"


def public_names() -> list[str]:
    """The `pl.*` surface; subpackages (which appear once anything imports them) are not names."""
    return [n for n in dir(plang)
            if not n.startswith("_") and not isinstance(getattr(plang, n), types.ModuleType)]


def test_every_public_name_is_documented():
    text = "\n".join(p.read_text() for p in sorted(DOCS.glob("*.md")))
    missing = [n for n in public_names()
               if not re.search(rf"(?<![\w.])(pl|plang)\.{re.escape(n)}(?!\w)", text)]
    assert not missing, ("public pl.* names not mentioned as `pl.<name>` / `plang.<name>` in docs/: "
                         + ", ".join(missing))


def test_names_are_matched_whole():
    pattern = r"(?<![\w.])(pl|plang)\.add(?!\w)"
    assert not re.search(pattern, "pl.adds and pl.tile.add")
    assert re.search(pattern, "use `plang.add`")
