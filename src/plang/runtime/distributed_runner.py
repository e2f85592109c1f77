"""``plang.runtime.distributed_runner``: the module the reference's `DistributedWorker`
lives in (plang's is in `plang.distributed.host`; this module re-exports it and is a
documented upward import of the runtime layer)."""

from ..distributed.host import DistributedWorker

__all__ = ["DistributedWorker"]
