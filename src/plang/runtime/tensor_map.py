"""`OverlapMap`: derives RAW / WAR / WAW dependencies from the memory tasks touch.

Memory is tracked per buffer (a torch storage, keyed by its base data pointer) as a sorted
list of non-overlapping byte segments. Each segment remembers its last writer and the
readers since that write. An access to a byte range splits the segments at the range's
ends and then, per covered segment:

- a read depends on the segment's writer (RAW) and joins its readers;
- a write depends on the writer (WAW) and every reader (WAR), then becomes the writer.

Disjoint ranges of one buffer never conflict. A strided view's footprint is the contiguous
interval from its lowest to its highest byte (conservative: a column slice of a row-major
matrix covers the rows in between, so two interleaved column slices do conflict).

Tracked tasks need a boolean ``done`` attribute; finished tasks are never returned as
dependencies and are swept from the map as it grows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Iterable

import torch

from .device_tensor import DeviceTensor

Footprint = tuple[int, int, int]  # (buffer key, start byte, end byte) relative to the buffer


def footprint(value: Any) -> Footprint | None:
    """The (buffer, [start, end)) bytes a tensor argument covers; None for non-tensors or
    empty tensors."""
    if isinstance(value, DeviceTensor):
        value = value.torch()
    if not isinstance(value, torch.Tensor) or value.numel() == 0:
        return None
    itemsize = value.element_size()
    start = value.storage_offset() * itemsize
    base = value.data_ptr() - start
    if value.is_contiguous():
        return base, start, start + value.numel() * itemsize
    low = high = 0
    for size, stride in zip(value.shape, value.stride()):
        span = (size - 1) * stride
        if span < 0:
            low += span
        else:
            high += span
    return base, start + low * itemsize, start + (high + 1) * itemsize


def overlaps(a: Footprint | None, b: Footprint | None) -> bool:
    """Whether two footprints share a byte (None: not a tensor, shares nothing)."""
    return a is not None and b is not None and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


class Segment:
    __slots__ = ("start", "end", "writer", "readers")

    def __init__(self, start: int, end: int, writer: Any, readers: list) -> None:
        self.start, self.end, self.writer, self.readers = start, end, writer, readers

    def split(self, at: int) -> Segment:
        """Cut at `at`; self keeps [start, at), the returned segment is [at, end)."""
        tail = Segment(at, self.end, self.writer, list(self.readers))
        self.end = at
        return tail

    def live(self) -> bool:
        if self.writer is not None and self.writer.done:
            self.writer = None
        if self.readers:
            self.readers = [r for r in self.readers if not r.done]
        return self.writer is not None or bool(self.readers)


class _Buffer:
    __slots__ = ("starts", "segments", "sweep_at")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.segments: list[Segment] = []
        self.sweep_at = 64

    def cover(self, start: int, end: int) -> list[Segment]:
        """The segments exactly covering [start, end), created / split as needed."""
        starts, segs = self.starts, self.segments
        i = bisect_right(starts, start) - 1
        if i >= 0 and segs[i].end > start and segs[i].start < start:
            tail = segs[i].split(start)
            starts.insert(i + 1, start)
            segs.insert(i + 1, tail)
        i = bisect_left(starts, start)
        out: list[Segment] = []
        pos = start
        while pos < end:
            if i < len(segs) and segs[i].start == pos:
                seg = segs[i]
                if seg.end > end:
                    tail = seg.split(end)
                    starts.insert(i + 1, end)
                    segs.insert(i + 1, tail)
                out.append(seg)
                pos = seg.end
                i += 1
            else:
                gap_end = min(end, segs[i].start) if i < len(segs) else end
                seg = Segment(pos, gap_end, None, [])
                starts.insert(i, pos)
                segs.insert(i, seg)
                out.append(seg)
                pos = gap_end
                i += 1
        return out

    def sweep(self) -> None:
        keep = [s for s in self.segments if s.live()]
        self.segments = keep
        self.starts = [s.start for s in keep]
        self.sweep_at = max(64, 2 * len(keep))


class OverlapMap:
    """Per-buffer byte-range access history; `access` returns the unfinished tasks a new
    access must wait for and records it."""

    def __init__(self) -> None:
        self._buffers: dict[int, _Buffer] = {}
        self._deferred: list[tuple[Any, Any, bool]] = []

    @property
    def empty(self) -> bool:
        """Nothing recorded: a task submitted now depends on no tracked access."""
        return not self._buffers and not self._deferred

    def defer(self, value: Any, task: Any, write: bool) -> None:
        """Record `task` reading or writing tensor `value`, deriving nothing: for the accesses
        of a task submitted while the map is `empty`. They are recorded when the map is next
        consulted, and dropped by `clear()` before that: a one-task run never pays for the
        bookkeeping (~15% of a warm `@pl.jit` call of one kernel)."""
        self._deferred.append((value, task, write))

    def _record_deferred(self) -> None:
        deferred, self._deferred = self._deferred, []
        for value, task, write in deferred:
            where = footprint(value)
            if where is not None:
                self.access(where, task, write, set())

    def access(self, where: Footprint, task: Any, write: bool, deps: set) -> None:
        """Record `task` reading or writing `where`; add the tasks it must follow to `deps`."""
        if self._deferred:
            self._record_deferred()
        key, start, end = where
        buf = self._buffers.get(key)
        if buf is None:
            buf = self._buffers[key] = _Buffer()
        for seg in buf.cover(start, end):
            writer = seg.writer
            if writer is not None and writer is not task and not writer.done:
                deps.add(writer)
            if write:
                for r in seg.readers:
                    if r is not task and not r.done:
                        deps.add(r)
                seg.writer = task
                seg.readers = []
            else:
                readers = seg.readers
                if len(readers) >= 32:
                    readers = seg.readers = [r for r in readers if not r.done]
                if not readers or readers[-1] is not task:
                    readers.append(task)
        if len(buf.segments) > buf.sweep_at:
            buf.sweep()

    def accessors_of(self, where: Footprint, readers: bool = False) -> Iterable[Any]:
        """Unfinished tasks that last wrote any byte of `where` (and, with `readers`, those
        that read it since); nothing is recorded."""
        if self._deferred:
            self._record_deferred()
        key, start, end = where
        buf = self._buffers.get(key)
        if buf is None:
            return []
        out = []
        i = max(0, bisect_right(buf.starts, start) - 1)
        for seg in buf.segments[i:]:
            if seg.start >= end:
                break
            if seg.end > start:
                if seg.writer is not None and not seg.writer.done:
                    out.append(seg.writer)
                if readers:
                    out += [r for r in seg.readers if not r.done]
        return out

    def segments(self, key: int) -> list[Segment]:
        """The access history of buffer `key` (byte ranges with their writer and readers)."""
        if self._deferred:
            self._record_deferred()
        buf = self._buffers.get(key)
        return list(buf.segments) if buf is not None else []

    def install(self, key: int, segments: list[Segment]) -> None:
        """Set buffer `key`'s whole history (sorted, disjoint segments) in one step."""
        if self._deferred:
            self._record_deferred()
        buf = self._buffers[key] = _Buffer()
        buf.segments = segments
        buf.starts = [s.start for s in segments]
        buf.sweep_at = max(64, 2 * len(segments))

    def clear(self) -> None:
        self._buffers.clear()
        self._deferred.clear()

    def __len__(self) -> int:
        if self._deferred:
            self._record_deferred()
        return sum(len(b.segments) for b in self._buffers.values())
