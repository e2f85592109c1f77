"""Valid calls of the `pld.*` ops and the result types they deduce (shared with test_ops_valid)."""

from __future__ import annotations

from _ops_util import scalar, tensor, tile

from plang.dtypes import FP32, INT32, INT64
from plang.ir import CommCtxType, DistributedTensorType, PtrType, Var
from plang.ir.enums import AtomicType, NotifyOp, ReduceOp, WaitCmp


def dtensor(shape, dtype=FP32, name="d") -> Var:
    return Var(name, DistributedTensorType(shape, dtype))


DATA, SIGNAL = dtensor([4, 64]), dtensor([4], INT32, "sig")
PEER = scalar(INT32, "peer")
DISTRIBUTED_CASES: dict[str, tuple[tuple, dict, str]] = {
    "pld.system.world_size": ((), {}, "Scalar[INT64]"),
    "pld.system.get_comm_ctx": ((DATA,), {}, "CommCtxType"),
    "pld.system.rank": ((Var("ctx", CommCtxType()),), {}, "Scalar[INT32]"),
    "pld.system.nranks": ((Var("ctx", CommCtxType()),), {}, "Scalar[INT32]"),
    "pld.system.notify": ((SIGNAL, PEER, [0], 1), {"op": NotifyOp.AtomicAdd}, "()"),
    "pld.system.wait": ((SIGNAL, [0], 2), {"cmp": WaitCmp.Eq}, "()"),
    "pld.system.defer_wait": ((SIGNAL, [0], 2), {"cmp": WaitCmp.Ge}, "()"),
    "pld.tensor.alloc_window_buffer": ((1024,), {}, "PtrType"),
    "pld.tensor.window": ((Var("buf", PtrType()), [4, 64]), {"dtype": FP32}, "Tensor[[4, 64], FP32]"),
    "pld.tensor.put": ((DATA, PEER, tensor([4, 64])), {"atomic": AtomicType.Add}, "()"),
    "pld.tensor.get": ((tensor([4, 64]), PEER, DATA), {"chunk_rows": 2, "chunk_cols": 64, "pipeline": True},
                       "()"),
    "pld.tile.put": ((DATA, PEER, tensor([4, 64]), tile([2, 64])), {}, "()"),
    "pld.tile.get": ((tensor([4, 64]), PEER, DATA, tile([2, 64])),
                     {"dst_offsets": [0, 0], "src_offsets": [1, 0], "shape": [2, 64]}, "()"),
    "pld.tile.remote_load": ((DATA, PEER, [0, 0], [2, 64]), {"valid_shape": [1, 64]},
                             "Tile[[2, 64], FP32, valid=[1, 64]]"),
    "pld.tile.remote_store": ((tile([2, 64]), DATA, PEER, [2, 0]), {}, "()"),
    "pld.tensor.remote_store": ((tensor([2, 64]), DATA, PEER, [2, 0]), {}, "()"),
    "pld.tensor.allreduce": ((DATA, SIGNAL), {"op": ReduceOp.Max}, "Tensor[[4, 64], FP32]"),
    "pld.tensor.barrier": ((SIGNAL,), {}, "Tensor[[4], INT32]"),
    "pld.tensor.broadcast": ((DATA, SIGNAL), {"root": 0}, "Tensor[[4, 64], FP32]"),
    "pld.tensor.reduce_scatter": ((DATA, SIGNAL), {}, "Tensor[[4, 64], FP32]"),
    "pld.tensor.allgather": ((tensor([1, 64]), DATA, SIGNAL), {}, "Tensor[[4, 64], FP32]"),
    "pld.tensor.all_to_all": ((DATA, DATA, SIGNAL), {}, "Tensor[[4, 64], FP32]"),
    "pld.tensor.all_to_all_v": ((DATA, DATA, SIGNAL, tensor([4], INT64), dtensor([4], INT64, "rc")), {},
                                "Tensor[[4, 64], FP32]"),
}
