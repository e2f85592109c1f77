"""`PassError`: a diagnostic raised by a pass or verifier, with the span it points at.

`str(err)` renders like `plang.ParserError`: `file:line:col: PassError [PassName]: text`,
then the source line with a caret under the span when the file is readable (`linecache`).
"""

from __future__ import annotations

import linecache

from ..errors import Error
from ..ir.span import NO_SPAN, Span


class PassError(Error):
    """An error found while transforming or verifying IR.

    `pass_name` names the pass or property that found it, `span` the user code it is about.
    """

    def __init__(self, message: str, span: Span | None = None, pass_name: str = "") -> None:
        self.message = message
        self.span = span or NO_SPAN
        self.pass_name = pass_name
        super().__init__(self.render())

    @property
    def line(self) -> int:
        return self.span.begin_line

    def render(self) -> str:
        sp = self.span
        where = f"{sp.filename}:{sp.begin_line}:{sp.begin_col + 1}: " if sp.is_known else ""
        tag = f" [{self.pass_name}]" if self.pass_name else ""
        lines = [f"{where}PassError{tag}: {self.message}"]
        snippet = source_snippet(sp)
        return "\n".join(lines + ([snippet] if snippet else []))

    def with_pass(self, pass_name: str) -> PassError:
        """The same diagnostic attributed to `pass_name` (kept when already attributed)."""
        if self.pass_name:
            return self
        return PassError(self.message, self.span, pass_name)


def source_snippet(span: Span) -> str:
    """The span's first source line and a caret line under it ('' when unreadable);
    the same layout as `plang.ParserError`."""
    if not span.is_known:
        return ""
    text = linecache.getline(span.filename, span.begin_line).rstrip("\n")
    if not text:
        return ""
    gutter = f"{span.begin_line:>5} | "
    end = span.end_col if span.end_line == span.begin_line and span.end_col > span.begin_col else len(text)
    width = max(1, min(end, len(text)) - span.begin_col)
    return f"{gutter}{text}\n{' ' * (len(gutter) - 2)}| {' ' * span.begin_col}{'^' * width}"
