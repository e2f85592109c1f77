"""``plang.ir.compiled_program``: the module reference programs import `CompiledProgram` from
(plang's lives in `plang.runtime.compiled`; this module re-exports it and is a documented
upward import of the IR layer)."""

from ..runtime.compiled import CompiledProgram

__all__ = ["CompiledProgram"]
