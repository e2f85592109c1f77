"""``plang.runtime.distributed_runner``: the module the reference's `DistributedWorker`
lives in (plang's is in `plang.distributed.host`; this module re-exports it, and the helper
its SubWorker callbacks read their tensor arguments with, and is a documented upward import
of the runtime layer)."""

from ..distributed.host import DistributedWorker
from ..distributed.l3_program import tensor_from_continuous as _tensor_from_continuous

__all__ = ["DistributedWorker", "_tensor_from_continuous"]
