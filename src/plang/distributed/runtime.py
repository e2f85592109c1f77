"""The rank runtime: `pld` windows, one-sided transfers, signals and collectives on MPI-3.

One MPI process is one rank (with its own simulated chip). A window buffer is an
`MPI_Win_allocate` region of the same size on every rank, held in a passive-target epoch
(`Lock_all`) for its whole life, so a rank reaches a peer's slice without the peer taking
part: `put` / `remote_store` are `MPI_Put` (`MPI_Accumulate(SUM)` for `AtomicType.Add`),
`get` / `remote_load` are `MPI_Get`, each followed by `MPI_Win_flush` so the transfer is
complete at the target when the call returns. `notify` is an atomic `MPI_Accumulate`
(`SUM` for `AtomicAdd`, `REPLACE` for `Set`) plus a flush, so a notify issued after a put
reaches the peer only after the put's data. `wait` polls the local cell through
`MPI_Fetch_and_op(NO_OP)` (atomic with respect to the peers' accumulates) until the
comparison holds or `timeout` seconds pass. Collectives are MPI's own.

Values are numpy arrays; a window-bound tensor is a `WindowTensor` (a typed view of a
window at a byte offset).
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ..errors import Error
from ..ir.enums import AtomicType, NotifyOp, ReduceOp, WaitCmp

WINDOW_FLOOR = 4096
"""Bytes: the smallest window a rank allocates (the reference pads windows to 4 KiB)."""


class DistributedError(Error):
    """A distributed run failed: a missing MPI, a bad window access, a rank that raised."""


class WaitTimeout(DistributedError):
    """`pld.system.wait` saw no matching signal within the timeout."""


def mpi() -> Any:
    """The `mpi4py.MPI` module, or a DistributedError saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise DistributedError("plang.distributed needs MPI: pip install 'plang[distributed]' "
                               f"(mpi4py and mpich) ({e})") from None
    return MPI


def _datatype(dtype: np.dtype) -> Any:
    from mpi4py.util.dtlib import from_numpy_dtype

    return from_numpy_dtype(dtype)


_REDUCE = {ReduceOp.Sum: "SUM", ReduceOp.Max: "MAX", ReduceOp.Min: "MIN", ReduceOp.Prod: "PROD"}


class Window:
    """A window buffer: `nbytes` (at least WINDOW_FLOOR) on every rank of `comm`."""

    def __init__(self, comm: Any, nbytes: int, name: str = "") -> None:
        MPI = mpi()
        self.name = name or "window"
        self.nbytes = int(nbytes)
        self.win = MPI.Win.Allocate(max(self.nbytes, WINDOW_FLOOR), 1, comm=comm)
        self.memory = np.frombuffer(self.win.tomemory(), dtype=np.uint8)
        self.memory[:] = 0
        comm.Barrier()  # every slice is zero before any peer may touch it
        self.win.Lock_all()

    def tensor(self, shape: Sequence[int], dtype: Any, byte_offset: int = 0) -> WindowTensor:
        """A `shape` x `dtype` view of this window starting at `byte_offset`."""
        return WindowTensor(self, tuple(int(d) for d in shape), np.dtype(dtype), int(byte_offset))

    def free(self) -> None:
        """Close the epoch and free the window (collective)."""
        self.win.Unlock_all()
        self.win.Free()


class WindowTensor:
    """A window-bound tensor (`pld.DistributedTensor` at run time): `local` is this rank's
    slice as a numpy array sharing the window's memory."""

    __slots__ = ("window", "shape", "dtype", "byte_offset", "local")

    def __init__(self, window: Window, shape: tuple[int, ...], dtype: np.dtype, byte_offset: int) -> None:
        nbytes = int(np.prod(shape)) * dtype.itemsize
        if byte_offset < 0 or byte_offset + nbytes > len(window.memory):
            raise DistributedError(f"window {window.name!r}: a {list(shape)} {dtype} view at byte "
                                   f"{byte_offset} does not fit its {window.nbytes} bytes")
        self.window, self.shape, self.dtype, self.byte_offset = window, shape, dtype, byte_offset
        self.local = window.memory[byte_offset:byte_offset + nbytes].view(dtype).reshape(shape)

    def region(self, offsets: Sequence[int] | None, shape: Sequence[int] | None) -> tuple[Any, int]:
        """(MPI datatype of the region at `offsets` of `shape`, element count), committed."""
        offsets = [0] * len(self.shape) if offsets is None else [int(o) for o in offsets]
        shape = list(self.shape) if shape is None else [int(s) for s in shape]
        if len(offsets) != len(self.shape) or len(shape) != len(self.shape) or any(
                o < 0 or s <= 0 or o + s > d for o, s, d in zip(offsets, shape, self.shape)):
            raise DistributedError(f"window {self.window.name!r}: region offsets {offsets} shape {shape} "
                                   f"is outside the {list(self.shape)} tensor")
        base = _datatype(self.dtype)
        dt = base.Create_subarray(list(self.shape), shape, offsets).Commit()
        return dt, int(np.prod(shape))


class RankComm:
    """This rank's view of the group: `rank`, `nranks`, window allocation and every `pld` op.

    `timeout` bounds each `wait` (seconds)."""

    def __init__(self, comm: Any = None, timeout: float = 30.0) -> None:
        MPI = mpi()
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.nranks = self.comm.Get_size()
        self.timeout = timeout
        self._windows: list[Window] = []
        self._kept: bool | None = None  # keep_windows: whether a kept window is zeroed on reuse
        self._reused = 0

    # -- windows ---------------------------------------------------------------------------
    def alloc_window(self, nbytes: int, name: str = "") -> Window:
        """`pld.alloc_window_buffer`: collective; every rank allocates the same size. Where
        windows are kept (`keep_windows`), the n-th allocation of a run gets the n-th window of
        the first run back."""
        if self._kept is not None and self._reused < len(self._windows):
            w = self._windows[self._reused]
            if w.nbytes != int(nbytes):
                raise DistributedError(f"rank {self.rank}: window {self._reused} ({w.name!r}) of a prepared "
                                       f"worker was {w.nbytes} bytes in its first run, {int(nbytes)} now")
            self._reused += 1
            if self._kept:
                w.memory[:] = 0
                self.comm.Barrier()  # zero on every rank before any peer may touch it
            return w
        w = Window(self.comm, nbytes, name)
        self._windows.append(w)
        self._reused = len(self._windows)
        return w

    def keep_windows(self, reset: bool) -> None:
        """Keep the windows from one run to the next (a persistent prepared worker), zeroed
        again at each reuse where `reset`, else holding what the last run left."""
        self._kept = bool(reset)

    def free_windows(self, release: bool = False) -> None:
        """The end of a run (collective): free every window this RankComm allocated, unless
        they are kept and not `release`d."""
        self.comm.Barrier()  # no peer may still be reading our slices
        self._reused = 0
        if self._kept is not None and not release:
            return
        self._kept = None
        while self._windows:
            self._windows.pop().free()

    def _peer(self, peer: int, what: str) -> int:
        peer = int(peer)
        if not 0 <= peer < self.nranks:
            raise DistributedError(f"rank {self.rank}: {what} to peer {peer}, but there are only "
                                   f"{self.nranks} ranks")
        return peer

    # -- one-sided -------------------------------------------------------------------------
    def put(self, dst: WindowTensor, peer: int, src: Any, offsets: Sequence[int] | None = None,
            atomic: AtomicType = AtomicType.None_) -> None:
        """Write `src` into peer's `dst` at `offsets` (`pld.tensor.put`, `remote_store`);
        complete at the target on return."""
        peer = self._peer(peer, "put")
        data = np.ascontiguousarray(np.asarray(src, dtype=dst.dtype))
        dt, count = dst.region(offsets, data.shape)
        target = (dst.byte_offset, 1, dt)
        origin = [data, count, _datatype(dst.dtype)]
        if atomic is AtomicType.Add:
            dst.window.win.Accumulate(origin, peer, target=target, op=mpi().SUM)
        else:
            dst.window.win.Put(origin, peer, target=target)
        dst.window.win.Flush(peer)
        dt.Free()

    def get(self, src: WindowTensor, peer: int, offsets: Sequence[int] | None = None,
            shape: Sequence[int] | None = None) -> np.ndarray:
        """Peer's `src` region at `offsets` of `shape` (`pld.tensor.get`, `remote_load`)."""
        peer = self._peer(peer, "get")
        out = np.empty(tuple(src.shape if shape is None else shape), dtype=src.dtype)
        dt, count = src.region(offsets, out.shape)
        src.window.win.Get([out, count, _datatype(src.dtype)], peer, target=(src.byte_offset, 1, dt))
        src.window.win.Flush(peer)
        dt.Free()
        return out

    def notify(self, signal: WindowTensor, peer: int, offsets: Sequence[int], value: int,
               op: NotifyOp = NotifyOp.AtomicAdd) -> None:
        """`pld.system.notify`: atomically add `value` to (or set) peer's signal cell."""
        peer = self._peer(peer, "notify")
        MPI = mpi()
        cell = np.array([value], dtype=signal.dtype)
        disp = signal.byte_offset + self._cell(signal, offsets) * signal.dtype.itemsize
        signal.window.win.Accumulate([cell, 1, _datatype(signal.dtype)], peer, target=(disp, 1),
                                     op=MPI.SUM if op is NotifyOp.AtomicAdd else MPI.REPLACE)
        signal.window.win.Flush(peer)

    def wait(self, signal: WindowTensor, offsets: Sequence[int], expected: int,
             cmp: WaitCmp = WaitCmp.Ge, timeout: float | None = None) -> int:
        """`pld.system.wait`: block until this rank's signal cell `cmp` `expected`; returns
        the value seen. Raises WaitTimeout naming the signal and ranks after `timeout`."""
        MPI = mpi()
        win = signal.window.win
        disp = signal.byte_offset + self._cell(signal, offsets) * signal.dtype.itemsize
        seen = np.zeros(1, dtype=signal.dtype)
        dummy = np.zeros(1, dtype=signal.dtype)
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        pause = 0.0
        while True:
            win.Fetch_and_op(dummy, seen, self.rank, disp, op=MPI.NO_OP)
            win.Flush(self.rank)
            value = int(seen[0])
            if value == expected if cmp is WaitCmp.Eq else value >= expected:
                win.Sync()  # the data the signal guards is visible to local loads now
                return value
            if time.monotonic() > deadline:
                raise WaitTimeout(
                    f"rank {self.rank}: pld.system.wait on signal {signal.window.name!r} at "
                    f"{list(offsets)} timed out after {limit}s: value {value}, waiting for "
                    f"{cmp.name} {expected} (notifying ranks: any of 0..{self.nranks - 1})")
            time.sleep(pause)
            pause = min(pause * 2 + 1e-6, 1e-4)

    @staticmethod
    def _cell(signal: WindowTensor, offsets: Sequence[int]) -> int:
        offsets = [int(o) for o in offsets]
        if len(offsets) != len(signal.shape) or any(not 0 <= o < d for o, d in zip(offsets, signal.shape)):
            raise DistributedError(f"signal {signal.window.name!r}: offsets {offsets} outside "
                                   f"{list(signal.shape)}")
        return int(np.ravel_multi_index(offsets, signal.shape))

    # -- collectives -----------------------------------------------------------------------
    def _op(self, op: ReduceOp) -> Any:
        return getattr(mpi(), _REDUCE[op])

    def allreduce(self, target: Any, op: ReduceOp = ReduceOp.Sum) -> Any:
        """`pld.tensor.allreduce`: reduce `target` over every rank, in place."""
        self.comm.Allreduce(mpi().IN_PLACE, _local(target), op=self._op(op))
        return target

    def allgather(self, input: Any, target: Any) -> Any:
        """`pld.tensor.allgather`: `target[src]` = rank src's `input`."""
        self.comm.Allgather(np.ascontiguousarray(_local(input)), _local(target))
        return target

    def reduce_scatter(self, target: Any, op: ReduceOp = ReduceOp.Sum) -> Any:
        """`pld.tensor.reduce_scatter`: `target[rank]` = the reduction of every rank's
        `target[rank]`; `target` is [nranks, ...]."""
        buf = _local(target)
        chunk = np.empty(buf.shape[1:], dtype=buf.dtype)
        self.comm.Reduce_scatter_block(np.ascontiguousarray(buf), chunk, op=self._op(op))
        buf[self.rank] = chunk
        return target

    def broadcast(self, target: Any, root: int = 0) -> Any:
        """`pld.tensor.broadcast`: every rank's `target` = root's."""
        self.comm.Bcast(_local(target), root=self._peer(root, "broadcast"))
        return target

    def all_to_all(self, input: Any, target: Any) -> Any:
        """`pld.tensor.all_to_all`: `target[src]` = rank src's `input[rank]`."""
        self.comm.Alltoall(np.ascontiguousarray(_local(input)), _local(target))
        return target

    def barrier(self, signal: Any = None) -> Any:
        """`pld.tensor.barrier`: returns once every rank has arrived."""
        self.comm.Barrier()
        return signal


def _local(value: Any) -> np.ndarray:
    if isinstance(value, WindowTensor):
        return value.local
    if isinstance(value, np.ndarray):
        return value
    return value.numpy()  # a torch CPU tensor shares its memory
