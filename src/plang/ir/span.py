"""Source locations carried by every IR node."""

from __future__ import annotations


class Span:
    """A region of user source: file, begin/end line (1-based) and column (0-based)."""

    __slots__ = ("filename", "begin_line", "begin_col", "end_line", "end_col")

    def __init__(self, filename: str = "<unknown>", begin_line: int = 0, begin_col: int = 0,
                 end_line: int | None = None, end_col: int | None = None) -> None:
        self.filename = filename
        self.begin_line = begin_line
        self.begin_col = begin_col
        self.end_line = begin_line if end_line is None else end_line
        self.end_col = begin_col if end_col is None else end_col

    @property
    def is_known(self) -> bool:
        return self.begin_line > 0

    @property
    def fields(self) -> tuple:
        """(filename, begin_line, begin_col, end_line, end_col): `Span(*fields)` rebuilds it."""
        return tuple(getattr(self, s) for s in Span.__slots__)

    def __repr__(self) -> str:
        return f"{self.filename}:{self.begin_line}:{self.begin_col}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Span) and all(
            getattr(self, s) == getattr(other, s) for s in Span.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, s) for s in Span.__slots__))


NO_SPAN = Span()
