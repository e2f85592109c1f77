"""``pl.graph`` regions: record the task topology once, replay it afterwards.

The first execution of a region (per program handle and region name) runs normally and is
*recorded*: each launch's signature (kernel, argument count, directions, SPMD blocks), the
tensors the region creates (`Orchestrator.create_tensor`), and the dependency edges
between the region's launches that go through those region-created ("internal") tensors,
derived structurally (whether or not the producer had already finished).

A later execution *replays*: the region's Python still runs (it computes this execution's
tensors and boundary scalars), but an argument in an internal tensor skips the OverlapMap:
its edges are the recorded ones, mapped onto this execution's tasks. Arguments in tensors
from outside the region (the boundary) are tracked as usual, so ordering against the rest
of the program is unchanged. When the region ends, each internal tensor's final access
state (last writers, readers since) is installed into the OverlapMap in one step, so tasks
after the region see its writes. Only tensor addresses and scalars change between
executions: a replay whose launches or created tensors differ from the recording raises
`GraphReplayError` (nothing is silently mis-ordered). An internal tensor read or written by
the host inside the region is tracked normally.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..errors import Error
from ..ir.enums import ParamDirection
from .tensor_map import OverlapMap, Segment, footprint


class GraphReplayError(Error, RuntimeError):
    """A ``pl.graph`` region executed differently from its recorded topology."""


@dataclass(frozen=True)
class RecordedLaunch:
    signature: tuple  # (kernel name, argument count, directions, blocks)
    preds: tuple[int, ...]  # region launches it follows through internal tensors
    internal: tuple[tuple[int, int], ...]  # (argument position, creation index), skippable ones


class GraphRecording:
    """The recorded topology of one ``pl.graph`` region, with replay counters."""

    def __init__(self, name: str, launches: list[RecordedLaunch], creations: list[tuple],
                 final: dict[int, list[tuple[int, int, int | None, tuple[int, ...]]]]) -> None:
        self.name = name
        self.launches = launches
        self.creations = creations  # (shape, dtype) of each tensor the region creates
        self.final = final  # creation index -> segments (start, end, writer, readers) at region end
        self.replays = 0
        self.skipped_lookups = 0  # OverlapMap accesses replays did not make

    def __repr__(self) -> str:
        return (f"<GraphRecording {self.name!r} launches={len(self.launches)} "
                f"replays={self.replays} skipped_lookups={self.skipped_lookups}>")


class _Stub:
    """A region launch in the structural OverlapMap: never finishes."""

    __slots__ = ("index",)
    done = False

    def __init__(self, index: int) -> None:
        self.index = index


class GraphRun:
    """One execution of a region; records when `recording` is None, else replays it."""

    def __init__(self, name: str, recording: GraphRecording | None) -> None:
        self.name, self.recording = name, recording
        self.tasks: list[Any] = []
        self.created: dict[int, int] = {}  # buffer key -> creation index
        self.creations: list[tuple] = []
        self.host_touched: set[int] = set()  # creation indices the host read / wrote
        self.launches: list[tuple[tuple, list, list]] = []  # recording: (signature, preds, internal)
        self._structure = OverlapMap()  # recording: internal accesses of stub tasks
        self._stubs: list[_Stub] = []
        self.result: GraphRecording | None = None

    def fail(self, what: str) -> GraphReplayError:
        return GraphReplayError(f"pl.graph {self.name!r}: {what}; the recorded topology is fixed "
                                "after the first execution (only tensors and scalars may change)")

    # ---------------------------------------------------------------- hooks
    def created_tensor(self, tensor: torch.Tensor) -> None:
        index = len(self.creations)
        shape = (tuple(tensor.shape), tensor.dtype)
        rec = self.recording
        if rec is not None and (index >= len(rec.creations) or rec.creations[index] != shape):
            raise self.fail(f"tensor #{index} created by the region differs from the recording")
        self.creations.append(shape)
        where = footprint(tensor)
        if where is not None:
            self.created[where[0]] = index

    def host_access(self, where: tuple[int, int, int]) -> None:
        index = self.created.get(where[0])
        if index is None:
            return
        if self.recording is not None and index in self.recording.final:
            raise self.fail(f"the host touches region tensor #{index}, which it did not when recorded")
        self.host_touched.add(index)

    def derive(self, task: Any, args: tuple, directions: Sequence[ParamDirection] | None,
               tracked: bool, before: set, overlap: OverlapMap) -> bool:
        """Dependencies of a region launch (into `before`); returns whether an argument went
        untracked (NoDep / manual scope)."""
        k = len(self.tasks)
        self.tasks.append(task)
        signature = (task.name, len(args), None if directions is None else tuple(directions), task.blocks)
        rec = self.recording
        if rec is not None and (k >= len(rec.launches) or rec.launches[k].signature != signature):
            got = f"{task.name} with {len(args)} arguments"
            raise self.fail(f"launch #{k} is {got}, not the recorded one")
        untracked = not tracked and bool(args)
        internal: list[tuple[int, int]] = []
        accesses = []
        if tracked:
            for i, arg in enumerate(args):
                direction = ParamDirection.In if directions is None else directions[i]
                if direction is ParamDirection.NoDep:
                    untracked = True
                    continue
                where = footprint(arg)
                if where is None:
                    continue
                index = self.created.get(where[0])
                if index is not None and (rec is None or index in rec.final):
                    internal.append((i, index))
                accesses.append((where, direction is not ParamDirection.In, index))
        if rec is None:
            self._record(k, signature, accesses, internal)
            for where, write, _ in accesses:
                overlap.access(where, task, write, before)
            return untracked
        if tuple(internal) != rec.launches[k].internal:
            raise self.fail(f"launch #{k} ({task.name}) uses the region's tensors differently")
        for where, write, index in accesses:
            if index is None or index not in rec.final:
                overlap.access(where, task, write, before)
        rec.skipped_lookups += len(internal)
        before.update(self.tasks[p] for p in rec.launches[k].preds)
        return untracked

    def _record(self, k: int, signature: tuple, accesses: list, internal: list) -> None:
        stub = _Stub(k)
        self._stubs.append(stub)
        preds: set = set()
        for where, write, index in accesses:
            if index is not None:
                self._structure.access((index, where[1], where[2]), stub, write, preds)
        self.launches.append((signature, sorted(p.index for p in preds), internal))

    # ---------------------------------------------------------------- region end
    def finish(self, overlap: OverlapMap) -> GraphRecording | None:
        """Recording: the new `GraphRecording`. Replay: installs the internal tensors'
        final access state into `overlap`."""
        rec = self.recording
        if rec is None:
            final = {}
            for index in range(len(self.creations)):
                if index not in self.host_touched:
                    final[index] = [(s.start, s.end, None if s.writer is None else s.writer.index,
                                     tuple(r.index for r in s.readers))
                                    for s in self._structure.segments(index)]
            launches = [RecordedLaunch(sig, tuple(preds), tuple((i, j) for i, j in internal if j in final))
                        for sig, preds, internal in self.launches]
            return GraphRecording(self.name, launches, self.creations, final)
        if len(self.tasks) != len(rec.launches) or len(self.creations) != len(rec.creations):
            raise self.fail(f"the region ended after {len(self.tasks)} launches, "
                            f"recorded {len(rec.launches)}")
        keys = {index: key for key, index in self.created.items()}
        tasks = self.tasks
        for index, segments in rec.final.items():
            if index in keys:
                overlap.install(keys[index], [
                    Segment(start, end, None if w is None else tasks[w], [tasks[r] for r in readers])
                    for start, end, w, readers in segments])
        rec.replays += 1
        return None
