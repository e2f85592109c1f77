"""``plang.ir.distributed_compiled_program``: the module reference programs import
`DistributedConfig` from (plang's lives in `plang.distributed.host`; this module re-exports
it and is a documented upward import of the IR layer)."""

from ..distributed.host import DistributedCompiledProgram, DistributedConfig

__all__ = ["DistributedCompiledProgram", "DistributedConfig"]
