"""`pl.optimizations`: the entries `pl.at(..., optimizations=[...])` takes, under the module
name the reference gives them (`pl.optimizations.split(...)` is `pl.split(...)`)."""

from .constructs import CrossCoreSlot, Split, cross_core_slot, split

__all__ = ["CrossCoreSlot", "Split", "cross_core_slot", "split"]
