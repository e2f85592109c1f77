"""`RankOps`: the rank runtime as a rank's kernels see it, on torch tensors.

A window-bound tensor is a torch tensor sharing the window's memory (`RankOps.window`); the
ops find its window from the tensor's storage, so a kernel passes window tensors exactly as
it passes plain ones. Each method is the run-time meaning of the `pld` op of its name.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
import torch

from ..dtypes import DataType
from ..ir.enums import AtomicType, NotifyOp, ReduceOp, WaitCmp
from .runtime import DistributedError, RankComm, Window, WindowTensor


class CommCtx(NamedTuple):
    """`pld.get_comm_ctx(t)` at run time."""

    rank: int
    nranks: int


def _region(t: torch.Tensor, offsets: Sequence[Any] | None, shape: Sequence[Any] | None) -> torch.Tensor:
    offsets = [0] * t.dim() if offsets is None else [int(o) for o in offsets]
    shape = list(t.shape) if shape is None else [int(s) for s in shape]
    return t[tuple(slice(o, o + s) for o, s in zip(offsets, shape))]


class RankOps:
    """This rank's `pld` ops over `comm`."""

    def __init__(self, comm: RankComm) -> None:
        self.comm = comm
        self._windows: dict[tuple[int, tuple[int, ...]], WindowTensor] = {}

    @property
    def rank(self) -> int:
        return self.comm.rank

    @property
    def nranks(self) -> int:
        return self.comm.nranks

    # -- host side ---------------------------------------------------------------------------
    def alloc(self, nbytes: int, name: str = "") -> Window:
        return self.comm.alloc_window(int(nbytes), name)

    def window(self, buf: Window, shape: Sequence[int], dtype: DataType) -> torch.Tensor:
        """`pld.window(buf, shape, dtype=)`: this rank's slice of `buf` as a torch tensor."""
        wt = buf.tensor([int(d) for d in shape], dtype.to_numpy())
        try:
            t = torch.from_numpy(wt.local)
        except TypeError:  # ml_dtypes' bf16 / fp8: no torch view of the memory, no MPI datatype
            raise DistributedError(f"rank {self.rank}: pld.window of {dtype.name}: a window holds a dtype "
                                   f"MPI moves (FP32, FP16, integers), not {dtype.name}") from None
        self._windows[(t.data_ptr(), tuple(t.shape))] = wt
        return t

    def is_window(self, t: torch.Tensor) -> bool:
        return (t.data_ptr(), tuple(t.shape)) in self._windows

    def _wt(self, t: Any, what: str) -> WindowTensor:
        wt = self._windows.get((t.data_ptr(), tuple(t.shape))) if isinstance(t, torch.Tensor) else None
        if wt is None:
            shape = list(getattr(t, "shape", []))
            raise DistributedError(f"rank {self.rank}: {what} needs a whole window-bound tensor "
                                   f"(from pld.window), got a tensor of shape {shape}")
        return wt

    # -- system ------------------------------------------------------------------------------
    def get_comm_ctx(self, t: torch.Tensor) -> CommCtx:
        self._wt(t, "pld.get_comm_ctx")
        return CommCtx(self.rank, self.nranks)

    def notify(self, target, peer, offsets, value, op: int) -> None:
        self.comm.notify(self._wt(target, "pld.system.notify"), peer, offsets, int(value), NotifyOp(op))

    def wait(self, signal, offsets, expected, cmp: int) -> None:
        self.comm.wait(self._wt(signal, "pld.system.wait"), offsets, int(expected), WaitCmp(cmp))

    defer_wait = wait

    # -- one-sided ---------------------------------------------------------------------------
    def put(self, dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, atomic: int = 0) -> None:
        data = _region(src, src_offsets, shape).contiguous().numpy()
        self.comm.put(self._wt(dst, "pld.tensor.put"), peer, data, dst_offsets, AtomicType(atomic))

    def get(self, dst, peer, src, dst_offsets=None, src_offsets=None, shape=None) -> None:
        region = _region(dst, dst_offsets, shape)
        data = self.comm.get(self._wt(src, "pld.tensor.get"), peer, src_offsets, region.shape)
        region.copy_(torch.from_numpy(data))

    def remote_load(self, target, peer, offsets, shape, valid_shape=None) -> torch.Tensor:
        wt = self._wt(target, "pld.tile.remote_load")
        valid = [int(v) for v in (shape if valid_shape is None else valid_shape)]
        out = torch.zeros([int(s) for s in shape], dtype=target.dtype)
        _region(out, None, valid).copy_(torch.from_numpy(self.comm.get(wt, peer, offsets, valid)))
        return out

    def remote_store(self, src, target, peer, offsets, atomic: int = 0) -> None:
        wt = self._wt(target, "pld.remote_store")
        self.comm.put(wt, peer, src.contiguous().numpy(), offsets, AtomicType(atomic))

    # -- collectives -------------------------------------------------------------------------
    def allreduce(self, target, op: int = 0):
        self.comm.allreduce(self._wt(target, "pld.tensor.allreduce").local, ReduceOp(op))
        return target

    def reduce_scatter(self, target, op: int = 0):
        self.comm.reduce_scatter(self._wt(target, "pld.tensor.reduce_scatter").local, ReduceOp(op))
        return target

    def broadcast(self, target, root: int):
        self.comm.broadcast(self._wt(target, "pld.tensor.broadcast").local, root)
        return target

    def allgather(self, input, target):
        self.comm.allgather(input.contiguous().numpy(), self._wt(target, "pld.tensor.allgather").local)
        return target

    def all_to_all(self, input, target):
        self.comm.all_to_all(input.contiguous().numpy(), self._wt(target, "pld.tensor.all_to_all").local)
        return target

    def all_to_all_v(self, input, target, send_counts, recv_counts):
        """Every rank's `MAX_RECV`-row block for peer d (MAX_RECV = target rows / ranks) lands
        at rows `rank * MAX_RECV` of d's target; d's `recv_counts[rank, 0]` receives
        `min(send_counts[d], MAX_RECV)`, how many of those rows are valid (the rest are stale)."""
        wt = self._wt(target, "pld.tensor.all_to_all_v")
        capacity = target.shape[0] // self.nranks
        self.comm.all_to_all(input.contiguous().numpy(), wt.local)
        counts = np.minimum(send_counts.reshape(-1)[:self.nranks].numpy().astype(np.int32), capacity)
        received = np.empty(self.nranks, dtype=np.int32)
        self.comm.comm.Alltoall(np.ascontiguousarray(counts), received)
        self._wt(recv_counts, "pld.tensor.all_to_all_v").local.reshape(-1)[:self.nranks] = received
        return target

    def barrier(self, signal=None):
        self.comm.barrier()
        return signal
