"""User-facing errors: the `Error` base, the front end's `ParserError` family and
`InternalCompilerError`.

Every plang error a user can see derives from `Error`. One that knows where in the user's
source it is about carries that `span`; `str(err)` then renders `file:line:col: `, the message,
the source line and a caret under the offending code (plus a hint where one exists).
"""

from __future__ import annotations

import linecache
import os
import traceback

from .ir.span import NO_SPAN, Span

_PACKAGE = os.path.dirname(__file__) + os.sep


class Error(Exception):
    """Base of every user-facing plang error; `span` is NO_SPAN when no source location is known.

    `source_line` is the text under the span (None: read from the file when rendering)."""

    span: Span = NO_SPAN
    source_line: str | None = None

    def __init__(self, message: str = "", span: Span | None = None) -> None:
        super().__init__(message)
        if span is not None:
            self.span = span

    @property
    def line(self) -> int:
        return self.span.begin_line

    @property
    def column(self) -> int:
        return self.span.begin_col

    def headline(self) -> str:
        """The message line after `file:line:col: `."""
        return Exception.__str__(self)

    def notes(self) -> list[str]:
        """Lines rendered after the source snippet."""
        return []

    def render(self) -> str:
        sp = self.span
        head = f"{sp.filename}:{sp.begin_line}:{sp.begin_col + 1}: " if sp.is_known else ""
        return "\n".join([head + self.headline(), *self.snippet(), *self.notes()])

    def snippet(self) -> list[str]:
        """The source line under the span and a caret line ([] when unknown or unreadable)."""
        sp = self.span
        if not sp.is_known:
            return []
        if self.source_line is not None:
            text = self.source_line.rstrip("\n")
        else:
            text = linecache.getline(sp.filename, sp.begin_line).rstrip("\n")
            if not text:
                return []
        gutter = f"{sp.begin_line:>5} | "
        end = sp.end_col if sp.end_line == sp.begin_line and sp.end_col > sp.begin_col else len(text)
        width = max(1, min(end, len(text)) - sp.begin_col)
        return [gutter + text, " " * (len(gutter) - 2) + "| " + " " * sp.begin_col + "^" * width]

    def __str__(self) -> str:
        return self.render()


class ParserError(Error):
    """Base of every error the DSL parser reports: a code, the message and a hint."""

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
        super().__init__(message, span or NO_SPAN)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code
        self.source_line = source_line

    def headline(self) -> str:
        return f"{type(self).__name__} [{self.code}]: {self.message}"

    def snippet(self) -> list[str]:
        return super().snippet() if self.source_line is not None else []

    def notes(self) -> list[str]:
        return [f"hint: {self.hint}"] if self.hint else []


class ParserSyntaxError(ParserError):
    """A DSL construct written in a shape the parser does not accept."""

    code = "PL100"


class InvalidPythonError(ParserSyntaxError, SyntaxError):
    """DSL source that is not valid Python; also a `SyntaxError` (its filename, lineno, offset
    and text read from the span), as callers of the reference's ``pl.parse`` expect. Its
    message reads as any `ParserSyntaxError`'s."""

    def headline(self) -> str:
        return f"ParserSyntaxError [{self.code}]: {self.message}"

    @property
    def msg(self) -> str:
        return self.message

    @property
    def filename(self) -> str:
        return self.span.filename

    @property
    def lineno(self) -> int:
        return self.span.begin_line

    @property
    def offset(self) -> int:
        return self.span.begin_col + 1

    @property
    def text(self) -> str | None:
        return self.source_line


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


class InvalidOperationError(ParserError):
    """A statement where its construct forbids it: `break` / `continue` in a parallel or
    unrolled loop, or in a `pl.spmd` / `pl.split_aiv` body."""

    code = "PL700"


class JitSignatureError(Error, TypeError):
    """A `@pl.jit` parameter whose annotation cannot be read, or whose shape a helper cannot
    infer from its call sites; also a `TypeError`. The span is the parameter's line."""


class EagerCallError(Error, RuntimeError):
    """A `pl.*` wrapper called at the Python prompt instead of inside a DSL function."""


class InternalError(RuntimeError):
    """A broken internal invariant (`plang.internal_check`): a bug in plang or in code built on
    it. A RuntimeError, as the reference's is, not an `Error`: it is not the user's mistake."""


class InternalCompilerError(Error):
    """An unexpected exception inside plang while it compiled the user code at `span`: a plang
    bug. The original exception is `__cause__`; its last frame is named in the message."""

    def __init__(self, cause: BaseException, span: Span, source_line: str | None = None) -> None:
        frame = traceback.extract_tb(cause.__traceback__)[-1:] if cause.__traceback__ else []
        where = f" (raised at {frame[0].filename}:{frame[0].lineno} in {frame[0].name})" if frame else ""
        self.message = (f"internal compiler error: {type(cause).__name__}: {cause}{where}. This is a bug "
                        "in plang, not in your code; please report it")
        super().__init__(self.message, span)
        self.source_line = source_line

    def headline(self) -> str:
        return f"InternalCompilerError: {self.message}"

    def notes(self) -> list[str]:
        return ["hint: set PLANG_FRONTEND_DEBUG=1 to see the original exception unwrapped"]


def frontend_debug() -> bool:
    """`PLANG_FRONTEND_DEBUG=1`: the front end re-raises internal exceptions unwrapped."""
    return os.environ.get("PLANG_FRONTEND_DEBUG", "") not in ("", "0")


def raised_by_plang(exc: BaseException) -> bool:
    """Whether `exc` was raised by plang's own code below the frame that caught it (rather than
    by argument binding, a builtin, or other code the user's expression called)."""
    tb = exc.__traceback__.tb_next if exc.__traceback__ else None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            return True
        tb = tb.tb_next
    return False


__all__ = [
    "EagerCallError",
    "Error",
    "InternalCompilerError",
    "InvalidPythonError",
    "JitSignatureError",
    "ParserError",
    "ParserNameError",
    "ParserSyntaxError",
    "ParserTypeError",
    "SSAViolationError",
    "UnsupportedConstructError",
    "frontend_debug",
    "raised_by_plang",
]
