"""The pass pipeline: `PassManager`, instruments, properties and every registered pass.

Each pass lives in its own module of this package (verifiers in `verifiers/`) and
registers itself with `@register_pass`; importing `plang.passes` imports every such module,
so a new pass only needs its file — pipelines refer to passes by name (`PIPELINES`).
Every pass is also reachable as `plang.passes.<snake_name>`, e.g.
`plang.passes.convert_to_ssa()(program)` runs ConvertToSSA alone (checking its required
properties first). `PassContext` sets instruments, verification, config and disabled passes
for every run in the current thread. Shared analyses live in `passes/analysis/`.
"""

from __future__ import annotations

import importlib
import pkgutil

from .context import PassContext, VerifyLevel
from .diagnostics import PassError
from .framework import PASSES, FunctionPass, Pass, get_pass, register_pass, snake_name
from .instruments import (
    DumpIRInstrument,
    Instrument,
    RoundTripInstrument,
    TimingInstrument,
    VerifyPropertiesInstrument,
)
from .pass_manager import PIPELINES, VERIFIERS, PassManager
from .properties import PROPERTIES, Property, get_property, property_holds, register_property

_FRAMEWORK_MODULES = {"analysis", "context", "diagnostics", "framework", "instruments", "pass_manager",
                      "properties"}


def _import_pass_modules() -> None:
    for package in (__name__, f"{__name__}.verifiers"):
        path = importlib.import_module(package).__path__
        for info in pkgutil.iter_modules(path):
            if info.name not in _FRAMEWORK_MODULES and not info.name.startswith("_"):
                importlib.import_module(f"{package}.{info.name}")


_import_pass_modules()
# A pass module shares its pass's snake name (convert_to_ssa.py holds ConvertToSSA); the
# package attribute is the pass class, the module stays importable through sys.modules.
globals().update({snake_name(name): cls for name, cls in PASSES.items()})


def __getattr__(name: str) -> type[Pass]:
    """`plang.passes.convert_to_ssa` -> the ConvertToSSA pass class."""
    try:
        return get_pass(name)
    except KeyError:
        raise AttributeError(f"module 'plang.passes' has no attribute {name!r}") from None


__all__ = ["PASSES", "PIPELINES", "PROPERTIES", "VERIFIERS", "DumpIRInstrument", "FunctionPass",
           "Instrument", "Pass", "PassContext", "PassError", "PassManager", "Property",
           "RoundTripInstrument", "TimingInstrument", "VerifyLevel", "VerifyPropertiesInstrument",
           "get_pass", "get_property", "property_holds", "register_pass", "register_property",
           "snake_name"]
