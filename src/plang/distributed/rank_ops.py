"""`RankOps`: the rank runtime as a rank's kernels see it, on torch tensors.

A window-bound tensor is a torch tensor sharing the window's memory (`RankOps.window`); the
ops find its window from the tensor's storage, so a kernel passes window tensors exactly as
it passes plain ones. Each method is the run-time meaning of the `pld` op of its name.

MPI has no BF16 or FP8 datatype: such a window is held as integers of the same width (its
`carrier`), which puts, gets and the collectives that only move data move as they are; a
reduction over it (allreduce, reduce_scatter) is computed in FP32 and rounded once.
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


_CARRIERS = {2: torch.int16, 1: torch.int8}


def _carrier(dtype: torch.dtype) -> torch.dtype | None:
    """The integer dtype of the same width that MPI moves a float dtype numpy lacks (BF16,
    FP8) as; None for a dtype numpy and MPI know."""
    if not dtype.is_floating_point or dtype in (torch.float16, torch.float32, torch.float64):
        return None
    return _CARRIERS[dtype.itemsize]


def _numpy(t: torch.Tensor, dtype: torch.dtype | None = None) -> np.ndarray:
    """`t` (converted to `dtype`) as a contiguous numpy array MPI can move."""
    t = t.to(t.dtype if dtype is None else dtype).contiguous()
    carrier = _carrier(t.dtype)
    return (t if carrier is None else t.view(carrier)).numpy()


def _torch(a: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """The inverse of `_numpy`: numpy data MPI moved, as a `dtype` tensor."""
    t = torch.from_numpy(a)
    return t if t.dtype is dtype else t.view(dtype)


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
        try:
            torch_dtype = dtype.to_torch()
        except TypeError:
            raise DistributedError(f"rank {self.rank}: pld.window of {dtype.name}: a window holds a dtype "
                                   "torch has") from None
        wt = buf.tensor([int(d) for d in shape], _numpy(torch.empty(0, dtype=torch_dtype)).dtype)
        t = _torch(wt.local, torch_dtype)
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
        self._put(dst, peer, _region(src, src_offsets, shape), dst_offsets, atomic, "pld.tensor.put")

    def get(self, dst, peer, src, dst_offsets=None, src_offsets=None, shape=None) -> None:
        region = _region(dst, dst_offsets, shape)
        data = self.comm.get(self._wt(src, "pld.tensor.get"), peer, src_offsets, region.shape)
        region.copy_(_torch(data, src.dtype))

    def remote_load(self, target, peer, offsets, shape, valid_shape=None) -> torch.Tensor:
        wt = self._wt(target, "pld.tile.remote_load")
        valid = [int(v) for v in (shape if valid_shape is None else valid_shape)]
        out = torch.zeros([int(s) for s in shape], dtype=target.dtype)
        _region(out, None, valid).copy_(_torch(self.comm.get(wt, peer, offsets, valid), target.dtype))
        return out

    def remote_store(self, src, target, peer, offsets, atomic: int = 0) -> None:
        self._put(target, peer, src, offsets, atomic, "pld.remote_store")

    def _put(self, dst, peer, src, offsets, atomic: int, what: str) -> None:
        wt = self._wt(dst, what)
        if AtomicType(atomic) is AtomicType.Add and _carrier(dst.dtype) is not None:
            raise DistributedError(f"rank {self.rank}: {what} with atomic add into a "
                                   f"{DataType.from_torch(dst.dtype).name} window: "
                                   "MPI adds no such numbers; add into an FP32 window")
        self.comm.put(wt, peer, _numpy(src, dst.dtype), offsets, AtomicType(atomic))

    # -- collectives -------------------------------------------------------------------------
    def allreduce(self, target, op: int = 0):
        return self._reduce(target, op, "allreduce")

    def reduce_scatter(self, target, op: int = 0):
        return self._reduce(target, op, "reduce_scatter")

    def _reduce(self, target, op: int, name: str):
        """The reduction `name` of RankComm over `target`'s window, in FP32 (rounded once)
        for a dtype MPI has no numbers of."""
        local = self._wt(target, f"pld.tensor.{name}").local
        if _carrier(target.dtype) is None:
            getattr(self.comm, name)(local, ReduceOp(op))
            return target
        wide = target.float()
        getattr(self.comm, name)(wide.numpy(), ReduceOp(op))
        target.copy_(wide)
        return target

    def broadcast(self, target, root: int):
        self.comm.broadcast(self._wt(target, "pld.tensor.broadcast").local, root)
        return target

    def allgather(self, input, target):
        self.comm.allgather(_numpy(input, target.dtype), self._wt(target, "pld.tensor.allgather").local)
        return target

    def all_to_all(self, input, target):
        self.comm.all_to_all(_numpy(input, target.dtype), self._wt(target, "pld.tensor.all_to_all").local)
        return target

    def all_to_all_v(self, input, target, send_counts, recv_counts):
        """Every rank's `MAX_RECV`-row block for peer d (MAX_RECV = target rows / ranks) lands
        at rows `rank * MAX_RECV` of d's target; d's `recv_counts[rank, 0]` receives
        `min(send_counts[d], MAX_RECV)`, how many of those rows are valid (the rest are stale)."""
        wt = self._wt(target, "pld.tensor.all_to_all_v")
        capacity = target.shape[0] // self.nranks
        self.comm.all_to_all(_numpy(input, target.dtype), wt.local)
        counts = np.minimum(send_counts.reshape(-1)[:self.nranks].numpy().astype(np.int32), capacity)
        received = np.empty(self.nranks, dtype=np.int32)
        self.comm.comm.Alltoall(np.ascontiguousarray(counts), received)
        self._wt(recv_counts, "pld.tensor.all_to_all_v").local.reshape(-1)[:self.nranks] = received
        return target

    def barrier(self, signal=None):
        self.comm.barrier()
        return signal
