"""``plang.ir.pass_manager``: the module reference programs import `OptimizationStrategy`,
`PassDumpLevel` and `PassManager` from (plang's `PassManager` lives in `plang.passes`; this
module re-exports it and is the one documented upward import of the IR layer)."""

from ..passes.pass_manager import PassManager
from .pipeline import OptimizationStrategy, PassDumpLevel, coerce_dump_level

__all__ = ["OptimizationStrategy", "PassDumpLevel", "PassManager", "coerce_dump_level"]
