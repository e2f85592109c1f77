"""User-facing errors of the front end: `ParserError` and its subclasses.

Every error carries a code, the message, the span of the offending source and (when known)
the source line, so `str(err)` renders `file:line:col`, the line and a caret under the
offending expression, plus a hint saying what to write instead where one exists.
"""

from __future__ import annotations

from .ir.span import NO_SPAN, Span


class ParserError(Exception):
    """Base of every error the DSL parser reports."""

    code = "PL000"
    kind = "error"

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        hint: str = "",
        code: str | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span or NO_SPAN
        self.hint = hint
        if code is not None:
            self.code = code
        self.source_line = source_line

    @property
    def line(self) -> int:
        return self.span.begin_line

    @property
    def column(self) -> int:
        return self.span.begin_col

    def __str__(self) -> str:
        sp = self.span
        head = f"{sp.filename}:{sp.begin_line}:{sp.begin_col + 1}: " if sp.is_known else ""
        out = [f"{head}{type(self).__name__} [{self.code}]: {self.message}"]
        if sp.is_known and self.source_line is not None:
            text = self.source_line.rstrip("\n")
            gutter = f"{sp.begin_line:>5} | "
            out.append(gutter + text)
            end = sp.end_col if sp.end_line == sp.begin_line and sp.end_col > sp.begin_col else len(text)
            width = max(1, min(end, len(text)) - sp.begin_col)
            out.append(" " * (len(gutter) - 2) + "| " + " " * sp.begin_col + "^" * width)
        if self.hint:
            out.append(f"hint: {self.hint}")
        return "\n".join(out)


class ParserSyntaxError(ParserError):
    """A DSL construct written in a shape the parser does not accept."""

    code = "PL100"


class ParserTypeError(ParserError):
    """An operand has the wrong kind, dtype or shape (including op type-deduction errors)."""

    code = "PL200"


class ParserNameError(ParserError):
    """A name that is not defined in the DSL function, its closure or its module."""

    code = "PL300"


class UnsupportedConstructError(ParserError):
    """Python syntax that has no meaning in a DSL body (try, lambda, while True, ...)."""

    code = "PL400"


class SSAViolationError(ParserError):
    """A second assignment to a name in a `strict_ssa=True` function."""

    code = "PL500"


class EagerCallError(RuntimeError):
    """A `pl.*` wrapper called at the Python prompt instead of inside a DSL function."""


__all__ = [
    "EagerCallError",
    "ParserError",
    "ParserNameError",
    "ParserSyntaxError",
    "ParserTypeError",
    "SSAViolationError",
    "UnsupportedConstructError",
]
