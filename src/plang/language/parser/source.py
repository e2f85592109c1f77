"""Where DSL source comes from (a function object, a class, or a string), spans into it, and
the `SourceTracker` that turns AST nodes into spans and located diagnostics."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ... import pyast
from ...errors import (
    Error,
    InternalCompilerError,
    InvalidPythonError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    frontend_debug,
)
from ...ir.ops import OpTypeError, OpValueError
from ...ir.span import Span


class Source:
    """A parsed snippet of user source plus the offsets that map it back to the file."""

    __slots__ = ("filename", "raw_lines", "line_offset", "col_offset", "tree", "source_map")

    def __init__(
        self,
        text: str,
        filename: str,
        line_offset: int = 0,
        source_map: dict[int, tuple[str, int, int]] | None = None,
    ) -> None:
        self.source_map = source_map
        raw = text.splitlines()
        dedented = textwrap.dedent(text)
        first = next((ln for ln in raw if ln.strip()), "")
        self.col_offset = len(first) - len(first.lstrip()) if dedented != text else 0
        self.filename, self.raw_lines, self.line_offset = filename, raw, line_offset
        try:
            self.tree = pyast.parse(dedented, filename)
        except SyntaxError as e:
            span = Span(
                filename, (e.lineno or 1) + line_offset, max((e.offset or 1) - 1, 0) + self.col_offset
            )
            raise self.locate(InvalidPythonError(f"invalid Python syntax: {e.msg}"), span) from None

    def span(self, node: ast.AST) -> Span:
        lo, co = self.line_offset, self.col_offset
        if self.source_map and node.lineno + lo in self.source_map:
            file, line, shift = self.source_map[node.lineno + lo]  # shift: generated - original column
            col = max(node.col_offset - shift, 0)
            width = (node.end_col_offset or node.col_offset) - node.col_offset
            return Span(file, line, col, line, col + max(width, 0))
        return Span(
            self.filename,
            node.lineno + lo,
            node.col_offset + co,
            (node.end_lineno or node.lineno) + lo,
            (node.end_col_offset or node.col_offset) + co,
        )

    def line_text(self, file_line: int, filename: str | None = None) -> str | None:
        if filename is not None and filename != self.filename:
            return linecache.getline(filename, file_line) or None
        i = file_line - self.line_offset - 1
        return self.raw_lines[i] if 0 <= i < len(self.raw_lines) else None

    def locate(self, err: ParserError, span: Span) -> ParserError:
        """Give `err` a span (when it has none yet) and the source line under it."""
        if not err.span.is_known:
            err.span = span
        if err.source_line is None:
            err.source_line = self.line_text(err.span.begin_line, err.span.filename)
        return err


class SourceTracker:
    """The source being parsed (an `@pl.inline` body swaps it in): spans of its nodes, errors
    located at them, and the error boundary around each statement and expression."""

    __slots__ = ("src",)

    def __init__(self, src: Source) -> None:
        self.src = src

    def span(self, node: ast.AST) -> Span:
        return self.src.span(node)

    def error(
        self,
        cls: type[ParserError],
        message: str,
        node: ast.AST | Span,
        hint: str = "",
        code: str | None = None,
    ) -> ParserError:
        span = node if isinstance(node, Span) else self.src.span(node)
        return self.src.locate(cls(message, span, hint=hint, code=code), span)

    def locate(self, err: ParserError, node: ast.AST) -> ParserError:
        return self.src.locate(err, self.src.span(node))

    @contextmanager
    def reading(self, src: Source) -> Iterator[None]:
        """Parse nodes of `src` inside the `with` body."""
        outer, self.src = self.src, src
        try:
            yield
        finally:
            self.src = outer

    def guarded(self, node: ast.AST, parse: Callable[..., Any], *args: Any) -> Any:
        """`parse(*args)` for the statement or expression `node`: parser errors located at it,
        an op's type error as `ParserTypeError`, any other exception as `InternalCompilerError`
        (raw under `PLANG_FRONTEND_DEBUG=1`)."""
        try:
            return parse(*args)
        except ParserError as e:
            raise self.locate(e, node) from None
        except Error:
            raise
        except (OpTypeError, OpValueError) as e:
            raise self.error(ParserTypeError, str(e), node) from None
        except Exception as e:
            if frontend_debug():
                raise
            span = self.src.span(node)
            raise InternalCompilerError(e, span, self.src.line_text(span.begin_line, span.filename)) from e


_CACHE: dict[int, tuple[Any, Source, ast.AST]] = {}  # filled idempotently: a race reads a source twice


def source_of(obj: Any) -> tuple[Source, ast.FunctionDef | ast.ClassDef]:
    """The `Source` of a function or class object and its def node, cached per code object by
    identity: equal code objects (the same body at the same line, in another file or under
    other annotations) are different sources."""
    key = getattr(obj, "__code__", obj)
    hit = _CACHE.get(id(key))
    if hit is not None and hit[0] is key:
        return hit[1], hit[2]  # type: ignore[return-value]
    try:
        lines, first = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as e:
        raise ParserSyntaxError(
            f"cannot read the source of {getattr(obj, '__qualname__', obj)!r}: {e}",
            hint="define DSL functions in a file, or pass source text to pl.parse",
        ) from None
    src = Source("".join(lines), filename, max(first, 1) - 1)
    node = next(n for n in src.tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    _CACHE[id(key)] = (key, src, node)
    return src, node
