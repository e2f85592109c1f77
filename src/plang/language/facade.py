"""The `pl` module that DSL source text and annotations are evaluated against.

The `plang` package registers itself here when it is imported (it imports this package, so
this package cannot import it back); text that says `pl.Tensor[[64], pl.FP32]` then reads
the very names the user's `import plang as pl` sees.
"""

from __future__ import annotations

from types import ModuleType

_FACADE: list[ModuleType] = []


def register_facade(module: ModuleType) -> None:
    _FACADE[:] = [module]


def facade() -> ModuleType:
    """The `pl` module (the `plang` package)."""
    if not _FACADE:
        raise RuntimeError("plang.language is used without the plang package; import plang first")
    return _FACADE[0]
