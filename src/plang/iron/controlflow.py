"""Control flow of core and sequence bodies: on the CPU chip these bodies run as Python, so
`range_` is `range` and `forever_` an endless counter (a `while_true` Worker's loop ends when
the run closes its fifos); `if_` is ordinary ``if``."""

from __future__ import annotations

import itertools
from typing import Iterator


def range_(start: int, stop: int | None = None, step: int = 1, **_: object) -> range:
    """`range` with the seed's spelling (extra keywords such as ``iter_args`` are refused)."""
    if _:
        raise TypeError(f"range_() on the CPU chip takes no {sorted(_)}: bodies are plain Python")
    return range(start) if stop is None else range(start, stop, step)


def forever_() -> Iterator[int]:
    """An endless loop counter; the run's end (its fifos closing) stops the Worker."""
    return itertools.count()
