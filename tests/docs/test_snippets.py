"""Every ```python block in docs/*.md and README.md runs against the current tree.

Conventions (docs/index.md repeats them for authors):
- Each ```python block runs, in order; blocks of one page share their globals. Each block
  is written to its own file `example.py` first, so `inspect.getsource` (and plang's
  parser) can read it. Text that must not run goes in a ```text block.
- A block whose first line is `# raises: Name` must raise an exception of class `Name`.
- A ```text block tagged `output` (```` ```text output ````) right after a python block must
  equal what that block printed; one tagged `error` right after a `# raises:` block must
  equal `str(exception)`, with the path of any block's file written as `example.py`.
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
RAISES = re.compile(r"#\s*raises:\s*([A-Za-z_][\w.]*)")


@dataclass
class Snippet:
    line: int
    code: str
    raises: str | None = None
    expect_output: str | None = None
    expect_error: str | None = None


def snippets(text: str) -> list[Snippet]:
    """The python blocks of a page, each with the text block that checks it (if any)."""
    out: list[Snippet] = []
    previous_end = -1
    for m in FENCE.finditer(text):
        info, body = m.group(1).split(), m.group(2)
        lang, tags = (info[0] if info else ""), info[1:]
        line = text.count("\n", 0, m.start()) + 1
        if lang == "python":
            first = body.splitlines()[0] if body.strip() else ""
            raises = RAISES.fullmatch(first.strip())
            out.append(Snippet(line, body, raises.group(1) if raises else None))
        elif lang == "text" and tags and tags[0] in ("output", "error"):
            between = text[previous_end:m.start()]
            if not out or between.strip():
                raise AssertionError(f"line {line}: a ```text {tags[0]} block must directly follow "
                                     f"a ```python block")
            if tags[0] == "output":
                out[-1].expect_output = body
            else:
                out[-1].expect_error = body
        previous_end = m.end()
    return out


PAGES = sorted(DOCS.glob("*.md")) + [DOCS.parent / "README.md"]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_snippets_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)  # anything a snippet writes (profiles, dumps) lands here
    namespace: dict = {}
    for i, snip in enumerate(snippets(page.read_text())):
        where = f"{page.name}:{snip.line}"
        folder = tmp_path / f"block{i}"
        folder.mkdir()
        path = folder / "example.py"
        path.write_text(snip.code)
        printed = io.StringIO()
        error: BaseException | None = None
        with contextlib.redirect_stdout(printed):
            try:
                namespace = runpy.run_path(str(path), init_globals=namespace, run_name="__main__")
            except Exception as e:  # noqa: BLE001 - compared with the block's `# raises:` below
                error = e
        if snip.raises is None:
            if error is not None:
                raise AssertionError(f"{where}: snippet raised {type(error).__name__}: {error}") from error
        else:
            assert error is not None, f"{where}: snippet was expected to raise {snip.raises}"
            names = {c.__name__ for c in type(error).__mro__}
            assert snip.raises in names, \
                f"{where}: expected {snip.raises}, got {type(error).__name__}: {error}"
            if snip.expect_error is not None:
                actual = re.sub(re.escape(str(tmp_path)) + r"/block\d+/example\.py", "example.py", str(error))
                assert actual.strip() == snip.expect_error.strip(), f"{where}: error text differs"
        if snip.expect_output is not None:
            assert printed.getvalue().strip() == snip.expect_output.strip(), f"{where}: output differs"


def test_fence_conventions_are_detected():
    page = (
        "```python\n# raises: ValueError\nraise ValueError('x')\n```\n"
        "```text error\nx\n```\n"
        "```python\nprint(1)\n```\n\n```text output\n1\n```\n"
        "```text\nnot checked\n```\n"
    )
    a, b = snippets(page)
    assert (a.raises, a.expect_error, a.expect_output) == ("ValueError", "x\n", None)
    assert (b.raises, b.expect_output) == (None, "1\n")


def test_text_check_without_python_block_is_rejected():
    with pytest.raises(AssertionError, match="must directly follow"):
        snippets("Intro\n\n```text output\n1\n```\n")
