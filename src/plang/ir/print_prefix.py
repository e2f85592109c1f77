"""Printed IR under another import name: `import plang as T` and `T.tile.load(...)` for `pl`."""

from __future__ import annotations

import io
import keyword
import tokenize

DEFAULT = "pl"


def check_prefix(prefix: str) -> str:
    """`prefix` if it can name the imported module, else a ValueError."""
    if not isinstance(prefix, str) or not prefix.isidentifier() or keyword.iskeyword(prefix):
        raise ValueError(f"prefix must be a Python identifier to import plang as, got {prefix!r}")
    return prefix


def with_prefix(source: str, prefix: str) -> str:
    """`source` (printed with `pl`) with every `pl.` name and `import plang as pl` re-spelled
    `prefix`; strings and other names are left alone."""
    if prefix == DEFAULT:
        return source
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int]] = []  # (row, col) of each `pl` to rename
    prev: tokenize.TokenInfo | None = None
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for tok, nxt in zip(tokens, tokens[1:]):
        if tok.type == tokenize.NAME and tok.string == DEFAULT:
            attribute_head = nxt.string == "." and not (prev is not None and prev.string == ".")
            import_alias = prev is not None and prev.string == "as"
            if attribute_head or import_alias:
                edits.append(tok.start)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok
    for row, col in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + prefix + line[col + len(DEFAULT):]
    return "".join(lines)
