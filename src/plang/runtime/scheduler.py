"""The task graph: tasks are submitted in program order, dependencies are derived as they
arrive, and ready tasks run on a pool of host threads (one per simulated core group).

A task is a kernel launch: a callable plus its arguments with per-argument directions
(In / Out / InOut / NoDep). Edges come from the `OverlapMap` (in AUTO scopes, for every
non-NoDep tensor argument) plus explicit ``deps=``. Launch protocol, by task kind:

- plain task:  ``fn(*args)``
- SPMD task (``blocks=n``): ``fn(*args, block_idx=i, block_num=n)`` for each block i, all
  under one cancel token (a failing block stops its siblings before they write again); with
  ``sync_start`` all blocks run at the same time on their own threads.
- Group task: every `GroupMember` runs concurrently on its own thread as
  ``fn(*args, pipes=<PipeSet>, subblock_idx=lane, block_idx=i, block_num=n)``; the members
  of one Group instance share a fresh `PipeSet`.
- ``barrier=(aic, aiv)`` (a `pl.system.syncall` launch, `plang.runtime.barriers`): blocks run
  at once as with ``sync_start``, sharing one cancel token; calls get ``barrier=<LaunchBarrier>``.

A host thread blocked in `wait()` while every core thread sleeps runs ready work itself (lane
``host`` in profiles) rather than paying a thread hand-off: a one-kernel call then costs no
wake-up, and no more than `workers` kernels ever run at once. An SPMD task dispatched while
every core sleeps runs all its blocks as one native launch (`native_spmd`): no thread
hand-off between its blocks' starts, none between their ends and the host.

``allow_early_resolve`` (the device pre-stages a flagged producer's consumers so they start
the instant it finishes) becomes priority on the CPU chip: when a flagged task finishes, its
newly ready consumers run next, the first on the same core thread (as after any task) and
the others at the front of the ready queue, ahead of independent work queued earlier, so a
critical path of short tasks is not held up behind it. Results never depend on it.

A predicate is evaluated when the task's dependencies are met; false retires the task
without running it (dependents are still released). A failing kernel (or a pipe timeout)
fails its task; its dependents, and any later task that depends on them, never run, and
`wait()` raises `TaskError` naming the task and kernel.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from ..ir.enums import ParamDirection, ScopeMode
from . import native_spmd
from .aux_threads import AuxThreads
from .barriers import LaunchBarrier
from .cancel import CancelToken, KernelCancelled, Watchdog, running
from .graph import GraphRecording, GraphRun
from .native_spmd import NativeSpmd
from .pipes import DEFAULT_SLOTS, PipeSet
from .profiling import Profiler
from .task import (
    CANCELLED,
    DONE,
    FAILED,
    NOT_DISPATCHED,
    PENDING,
    QUEUED,
    GroupMember,
    Task,
    TaskError,
    TaskGroupError,
    kernel_name,
)
from .tensor_map import OverlapMap, footprint, overlaps

__all__ = ["GroupMember", "Scheduler", "Task", "TaskError", "TaskGroupError", "kernel_name"]

IN, NO_DEP = ParamDirection.In, ParamDirection.NoDep
HOST_LANE = "host"  # profile lane of work the waiting host thread runs while every core is idle


class Scheduler:
    """Builds and runs the task graph on `workers` host threads."""

    def __init__(self, workers: int = 1, pipe_timeout: float = 30.0,
                 kernel_timeout: float | None = None) -> None:
        if workers < 1:
            raise ValueError(f"Scheduler needs at least one worker, got {workers}")
        self.workers = workers
        self.pipe_timeout = pipe_timeout
        self.kernel_timeout = kernel_timeout  # seconds a task instance may run (None: no limit)
        self._watchdog = Watchdog()
        self.profiler: Profiler | None = None
        self._ids = itertools.count()
        self._overlap = OverlapMap()
        self._scopes: list[ScopeMode] = []
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # outstanding reached 0 / a watched task ended
        self._outstanding = 0
        self._watchers = 0
        self._failed: list[Task] = []
        self._untracked: list[Task] = []  # tasks with arguments the OverlapMap does not track
        self._untracked_sweep = 256
        self._graph: GraphRun | None = None  # the pl.graph region being submitted
        self._ready: deque = deque()
        self._wake = threading.Condition(threading.Lock())
        self._idle = 0
        self._closing = False
        self._threads: list[threading.Thread] = []
        self._aux = AuxThreads()
        self._native = NativeSpmd(workers) if native_spmd.enabled() else None

    # ---------------------------------------------------------------- submission
    def submit(self, fn: Callable[..., Any], args: Sequence[Any] = (),
               directions: Sequence[ParamDirection] | None = None, *,
               deps: Sequence[Task | None] = (), predicate: Callable[[], Any] | None = None,
               allow_early_resolve: bool = False, blocks: int | None = None,
               sync_start: bool = False, name: str | None = None,
               barrier: tuple[int, int] | None = None) -> Task:
        """Add a kernel launch to the graph; returns its TaskId. `directions` defaults to
        In for every argument; `blocks` makes it an SPMD task of that many blocks."""
        return self._add(fn, tuple(args), directions, None, deps, predicate, allow_early_resolve,
                         blocks, sync_start, name or kernel_name(fn), barrier=barrier)

    def submit_group(self, members: Sequence[GroupMember], args: Sequence[Any] = (),
                     directions: Sequence[ParamDirection] | None = None, *,
                     deps: Sequence[Task | None] = (), predicate: Callable[[], Any] | None = None,
                     allow_early_resolve: bool = False, blocks: int | None = None,
                     sync_start: bool = False, name: str | None = None,
                     slots: int = DEFAULT_SLOTS, barrier: tuple[int, int] | None = None) -> Task:
        """Add a Group task: `members` run concurrently, connected by one `PipeSet` of
        `slots`-deep rings per instance. `args` / `directions` (the Group's own parameters)
        drive dependencies."""
        if not members:
            raise ValueError("a Group task needs at least one member kernel")
        name = name or "+".join(kernel_name(m.fn) for m in members)
        if not isinstance(slots, int) or slots < 1:
            raise ValueError(f"{name}: pipe slot count must be a positive int, got {slots!r}")
        return self._add(None, tuple(args), directions, tuple(members), deps, predicate,
                         allow_early_resolve, blocks, sync_start, name, slots, barrier)

    def _add(self, fn: Any, args: tuple, directions: Sequence[ParamDirection] | None,
             members: tuple | None, deps: Sequence[Task | None], predicate: Any,
             allow_early_resolve: bool, blocks: int | None, sync_start: bool, name: str,
             pipe_slots: int = DEFAULT_SLOTS, barrier: tuple[int, int] | None = None) -> Task:
        if blocks is not None and (not isinstance(blocks, int) or blocks < 1):
            raise ValueError(f"{name}: SPMD block count must be a positive int, got {blocks!r}")
        if directions is not None and len(directions) != len(args):
            raise ValueError(f"{name}: {len(args)} arguments but {len(directions)} directions")
        if self._ready and self._idle:  # an earlier submission's task still waits for a core
            self._kick()
        task = Task(next(self._ids), name, fn, args, members, predicate, blocks, sync_start,
                    allow_early_resolve)
        task.pipe_slots, task.barrier = pipe_slots, barrier
        before: set[Task] = set()
        graph = self._graph
        if graph is not None:
            tracked = not self._scopes or self._scopes[-1] is ScopeMode.AUTO
            if graph.derive(task, args, directions, tracked, before, self._overlap):
                self._untracked.append(task)
        elif args:
            untracked = bool(self._scopes) and self._scopes[-1] is not ScopeMode.AUTO
            if not untracked:
                overlap = self._overlap
                first = overlap.empty
                for i, arg in enumerate(args):
                    direction = IN if directions is None else directions[i]
                    if direction is NO_DEP:
                        untracked = True
                        continue
                    if first:
                        overlap.defer(arg, task, direction is not IN)
                        continue
                    where = footprint(arg)
                    if where is not None:
                        overlap.access(where, task, direction is not IN, before)
            if untracked:  # host reads / writes (`wait_for`) still wait for it
                self._untracked.append(task)
                if len(self._untracked) > self._untracked_sweep:
                    self._untracked = [t for t in self._untracked if not t.done]
                    self._untracked_sweep = max(256, 2 * len(self._untracked))
        for dep in deps:
            if dep is None:
                continue
            if not isinstance(dep, Task):
                raise TypeError(f"{name}: deps= takes TaskIds (or None), got {type(dep).__name__}")
            before.add(dep)
        if self.profiler is not None:
            task.dep_ids = tuple(sorted(d.id for d in before))
        with self._lock:
            self._outstanding += 1
            for dep in before or ():
                state = dep.state
                if state == DONE:
                    continue
                if state == FAILED or state == CANCELLED:
                    task.error = RuntimeError(f"not run: it depends on {dep.describe()}, "
                                              "which did not complete")
                    if not self._failed:
                        self._failed.append(task)
                    self._cancel([task])
                    return task
                dep.dependents.append(task)
                task.pending += 1
            ready = task.pending == 0
            if ready:
                task.state = QUEUED
        if ready:
            self._push(task)
        if not self._threads:
            self._start_threads()
        return task

    @contextmanager
    def scope(self, mode: ScopeMode = ScopeMode.AUTO) -> Iterator[None]:
        """A runtime scope: AUTO tracks memory dependencies, MANUAL only uses ``deps=``.
        AUTO scopes nest anywhere; a MANUAL scope can not be nested in another."""
        if not isinstance(mode, ScopeMode):
            raise TypeError(f"scope mode must be a pl.ScopeMode, got {mode!r}")
        if mode is ScopeMode.MANUAL and ScopeMode.MANUAL in self._scopes:
            raise RuntimeError("a manual scope can not be nested inside another manual scope")
        self._scopes.append(mode)
        try:
            yield
        finally:
            self._scopes.pop()

    @contextmanager
    def graph(self, name: str, recording: GraphRecording | None) -> Iterator[GraphRun]:
        """A ``pl.graph`` region (see `plang.runtime.graph`): records its topology when
        `recording` is None, else replays `recording`. The run's ``finish`` result (a new
        recording, or None) is left in ``run.result``."""
        if self._graph is not None:
            raise RuntimeError(f"pl.graph {name!r} is nested inside pl.graph {self._graph.name!r}")
        run = self._graph = GraphRun(name, recording)
        try:
            yield run
        finally:
            self._graph = None
        run.result = run.finish(self._overlap)

    def launch(self, fn: Any, args: tuple, directions: Sequence[ParamDirection], blocks: int,
               name: str) -> None:
        """Run one SPMD launch of `fn` now and wait for it, raising `TaskError` as `wait`
        does: a program that is nothing else (`direct_launch`). With nothing in flight and
        no profiler or timeout it is one native launch (`native_spmd`) and skips the graph;
        otherwise it is submitted and waited for."""
        if (blocks > 1 and self._native is not None and not self._outstanding and not self._ready
                and self.profiler is None and self.kernel_timeout is None and native_spmd.accepts(fn)):
            task = Task(next(self._ids), name, fn, args, None, None, blocks, False, False)
            task.token = CancelToken()
            error = self._native.run(task)
            if error is not None:
                task.state, task.error = FAILED, error
                raise TaskError(f"{task.describe()} failed: {error}", task) from error
            task.state, task.done = DONE, True
            return
        self.submit(fn, args, directions, blocks=blocks, name=name)
        self.wait()

    # ---------------------------------------------------------------- waiting
    def wait(self, timeout: float | None = None) -> None:
        """Block until every task retired, then drop their memory history; raise `TaskError`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ready = self._ready
        while self._outstanding:
            item = None
            if ready and self._idle == self.workers:  # every core sleeps: run ready work here
                try:
                    item = ready.popleft()
                except IndexError:  # a core took it meanwhile
                    pass
            if item is None:
                self._kick()
                with self._settled:
                    if self._outstanding:  # the cores drain whatever is queued
                        left = None if deadline is None else deadline - time.monotonic()
                        if left is not None and left <= 0:
                            raise TimeoutError(f"{self._outstanding} tasks still running after {timeout} s")
                        self._settled.wait(left)
                continue
            while item is not None:
                item = self._run_item(item[0], item[1], HOST_LANE)
        with self._settled:
            failed, self._failed = self._failed, []
            self._untracked = []
        if failed or self._graph is None:  # all retired: the history would only keep tensors alive
            self._overlap.clear()
        if failed:
            first = failed[0]
            more = f" (and {len(failed) - 1} more failed tasks)" if len(failed) > 1 else ""
            raise TaskError(f"{first.describe()} failed: {first.error}{more}", first) from first.error

    def wait_for(self, value: Any, write: bool = False) -> None:
        """Block until the tasks that last wrote `value` (a tensor) have finished, and with
        `write` also those reading it since; raise `TaskError` if one failed. Used for
        orchestration-time reads and writes."""
        where = footprint(value)
        if where is None:
            return
        if self._graph is not None:
            self._graph.host_access(where)
        writers = list(self._overlap.accessors_of(where, readers=write))
        self._untracked = [t for t in self._untracked if not t.done]
        writers += [t for t in self._untracked
                    if any(overlaps(where, footprint(a)) for a in t.args)]
        self._kick()
        with self._settled:
            self._watchers += 1
            try:
                while any(t.state < DONE for t in writers):
                    self._settled.wait()
            finally:
                self._watchers -= 1
        for t in writers:
            if t.state != DONE:
                raise TaskError(f"{'writing' if write else 'reading'} a tensor accessed by {t.describe()}, "
                                "which did not complete", t)

    @property
    def graph_run(self) -> GraphRun | None:
        """The ``pl.graph`` region being submitted, if any."""
        return self._graph

    # ---------------------------------------------------------------- execution
    def _start_threads(self) -> None:
        for lane in range(self.workers):
            thread = threading.Thread(target=self._worker_loop, args=(f"core-{lane}",), daemon=True,
                                      name=f"plang-core-{lane}")
            self._threads.append(thread)
            thread.start()

    def _push(self, task: Task) -> None:
        """Queue a task made ready by submission. A task queued into an empty queue does not
        wake a core: the host's next submission or its `wait()` does (see `_kick`), or
        `wait()` runs it on the host thread, saving a hand-off for one-kernel calls."""
        ready = self._ready
        ready.append((task, NOT_DISPATCHED))
        # Wake a sleeper only while the queue is shorter than the sleepers; an already
        # woken worker drains everything queued behind its item.
        queued = len(ready)
        if queued > 1 and self._idle and queued - 1 <= self._idle:
            with self._wake:
                self._wake.notify(2 if queued == 2 else 1)

    def _kick(self) -> None:
        """Wake sleeping cores for queued work the host will not run itself."""
        if self._ready and self._idle:
            with self._wake:
                self._wake.notify(len(self._ready))

    def _worker_loop(self, lane: str) -> None:
        ready = self._ready
        while True:
            try:
                item = ready.popleft()
            except IndexError:
                with self._wake:
                    self._idle += 1
                    while not ready and not self._closing:
                        self._wake.wait()
                    self._idle -= 1
                    if self._closing:
                        return
                continue
            while item is not None:
                item = self._run_item(item[0], item[1], lane)

    def _run_item(self, task: Task, block: int, lane: str) -> tuple[Task, int] | None:
        """Run one work item; returns the next item this thread should run (a dependent
        that became ready), so chains continue without a thread hand-off."""
        if block == NOT_DISPATCHED:
            if task.predicate is not None:
                try:
                    go = task.predicate()
                except BaseException as exc:
                    return self._finish(task, exc)
                if not go:
                    task.skipped = True
                    if self.profiler is not None:
                        self.profiler.skipped.append(task.id)
                    return self._finish(task, None)
            if task.sync_start or task.barrier is not None:
                return self._finish(task, self._run_together(task))
            if task.blocks is None:
                return self._finish(task, self._execute(task, 0, lane))
            task.blocks_left = task.blocks
            if task.blocks > 1:
                task.token = CancelToken()
                if self._native is not None and self._native_now(task):
                    return self._finish(task, self._native.run(task))
                self._ready.extend((task, b) for b in range(1, task.blocks))
                if self._idle:
                    with self._wake:
                        self._wake.notify(task.blocks - 1)
            block = 0
        error = self._execute(task, block, lane)
        with self._lock:
            if error is not None and (task.error is None or isinstance(task.error, KernelCancelled)):
                task.error = error  # a block's own failure before the cancellations it caused
            task.blocks_left -= 1
            last = task.blocks_left == 0
        if error is not None and task.token is not None and not isinstance(error, KernelCancelled):
            task.token.cancel(f"{task.describe(block)} failed: {type(error).__name__}")
        return self._finish(task, task.error) if last else None

    def _native_now(self, task: Task) -> bool:
        """Whether SPMD `task` runs as one native launch (`native_spmd`): it would otherwise
        wake idle cores for its blocks, and nothing needs the Python path's hooks."""
        return (not self._ready and self._idle == self.workers and self.profiler is None
                and self.kernel_timeout is None and native_spmd.accepts(task.fn))

    def _run_together(self, task: Task) -> BaseException | None:
        """Run every block at once, each on its own thread; the first failure (own, not caused)."""
        run = self._execute
        barrier = None if task.barrier is None else LaunchBarrier(self.pipe_timeout, *task.barrier)
        try:
            jobs = [self._aux.start(lambda aux, b=b: _raise(run(task, b, aux, barrier)))
                    for b in range(task.blocks or 1)]
            errors = [e for e in (job.join() for job in jobs) if e is not None]
        finally:
            if barrier is not None:
                barrier.close()
        errors.sort(key=lambda e: isinstance(e, KernelCancelled) or isinstance(e.__cause__, KernelCancelled))
        return errors[0] if errors else None

    def _execute(self, task: Task, block: int, lane: str,
                 barrier: LaunchBarrier | None = None) -> BaseException | None:
        """Run one instance of the task; returns the failure instead of raising."""
        try:
            if task.members is not None:
                self._run_group(task, block, lane, barrier)
            else:
                profiler = self.profiler
                start = time.perf_counter_ns() if profiler is not None else 0
                if barrier is not None:
                    with self._watched(barrier.token, task, block):
                        barrier.run(task.fn, task.args, task.describe(block), block, task.blocks or 1)
                elif self.kernel_timeout is not None:
                    token = task.token or CancelToken()
                    with self._watched(token, task, block), running(token):
                        self._call(task, block)
                elif task.token is None:
                    self._call(task, block)
                else:  # the blocks of an SPMD task share its token
                    with running(task.token):
                        self._call(task, block)
                if profiler is not None:
                    profiler.record(lane, task.name, task.id, block, 0, task.dep_ids, start,
                                    time.perf_counter_ns())
            return None
        except BaseException as exc:
            return exc

    @staticmethod
    def _call(task: Task, block: int) -> None:
        if task.blocks is None:
            task.fn(*task.args)
        else:
            task.fn(*task.args, block_idx=block, block_num=task.blocks)

    @contextmanager
    def _watched(self, token: CancelToken, task: Task, block: int) -> Iterator[None]:
        """Cancel `token` if the block runs longer than `kernel_timeout` (no-op without one)."""
        if self.kernel_timeout is None:
            yield
            return
        where = task.describe(block if task.blocks is not None else NOT_DISPATCHED)
        handle = self._watchdog.watch(token, self.kernel_timeout, f"{where} ran longer than "
                                      f"RunConfig.kernel_timeout = {self.kernel_timeout:g} s")
        try:
            yield
        finally:
            self._watchdog.unwatch(handle)

    def _run_group(self, task: Task, block: int, lane: str, barrier: LaunchBarrier | None) -> None:
        pipes = PipeSet(self.pipe_timeout, task.pipe_slots)
        # one per instance (with a barrier: per launch): a failing member stops all
        token = CancelToken(on_cancel=pipes.abort) if barrier is None else barrier.join(pipes)
        extra = {} if barrier is None else {"barrier": barrier}
        block_num = task.blocks or 1
        errors: list[tuple[GroupMember, BaseException]] = []

        def run_member(member: GroupMember, member_lane: str) -> None:
            profiler = self.profiler
            start = time.perf_counter_ns() if profiler is not None else 0
            try:
                with running(token):
                    member.fn(*member.args, pipes=pipes, subblock_idx=member.subblock_idx,
                              block_idx=block, block_num=block_num, **extra)
            except BaseException as exc:
                errors.append((member, exc))
                token.cancel(f"kernel {kernel_name(member.fn)} (sub-block {member.subblock_idx}) of its "
                             f"Group failed")
            if profiler is not None:
                profiler.record(member_lane, kernel_name(member.fn), task.id, block, member.subblock_idx,
                                task.dep_ids, start, time.perf_counter_ns())

        try:
            with self._watched(token, task, block):
                jobs = [self._aux.start(lambda aux_lane, m=m: run_member(m, aux_lane))
                        for m in task.members[1:]]
                run_member(task.members[0], lane)
                for job in jobs:
                    job.join()
            pipe_error = pipes.error()
        finally:
            if barrier is not None:
                barrier.leave(pipes)
            pipes.close()
        errors.sort(key=lambda e: isinstance(e[1], KernelCancelled))  # a member's own failure first
        if pipe_error is not None:
            names = ", ".join(kernel_name(m.fn) for m in task.members)
            raise TaskGroupError(f"Group {task.describe(block)} [{names}]: {pipe_error}") from (
                errors[0][1] if errors else None)
        if errors:
            member, exc = errors[0]
            raise TaskGroupError(f"kernel {kernel_name(member.fn)} (sub-block {member.subblock_idx}) "
                                 f"raised {type(exc).__name__}: {exc}") from exc

    def _finish(self, task: Task, error: BaseException | None) -> tuple[Task, int] | None:
        """Retire `task`; returns one newly ready dependent to run next on this thread."""
        newly: list[Task] = []
        with self._lock:
            if error is not None:
                task.state = FAILED
                task.error = error
                self._failed.append(task)
                dependents, task.dependents = task.dependents, None
                self._cancel(dependents)
            else:
                task.state = DONE
                task.done = True
                for dep in task.dependents:
                    dep.pending -= 1
                    if dep.pending == 0 and dep.state == PENDING:
                        dep.state = QUEUED
                        newly.append(dep)
                task.dependents = None
            self._outstanding -= 1
            if self._outstanding == 0 or self._watchers:
                self._settled.notify_all()
        if not newly:
            return None
        if len(newly) > 1:
            rest = [(t, NOT_DISPATCHED) for t in newly[1:]]
            if task.allow_early_resolve:  # its consumers go ahead of work queued earlier
                self._ready.extendleft(reversed(rest))
            else:
                self._ready.extend(rest)
            if self._idle:
                with self._wake:
                    self._wake.notify(len(newly) - 1)
        return newly[0], NOT_DISPATCHED

    def _cancel(self, tasks: list[Task]) -> None:
        """Retire pending tasks (and transitively their dependents) without running them.
        Caller holds the lock and has counted them in `_outstanding`."""
        stack = list(tasks)
        while stack:
            t = stack.pop()
            if t.state != PENDING:
                continue
            t.state = CANCELLED
            self._outstanding -= 1
            if t.dependents:
                stack.extend(t.dependents)
            t.dependents = None

    # ---------------------------------------------------------------- shutdown
    def close(self) -> None:
        """Stop the threads (after the running tasks finish)."""
        with self._wake:
            self._closing = True
            self._wake.notify_all()
        for thread in self._threads:
            thread.join()
        self._threads = []
        self._aux.close()
        if self._native is not None:
            self._native.close()
        self._watchdog.close()
        self._overlap.clear()


def _raise(error: BaseException | None) -> None:
    if error is not None:
        raise error
