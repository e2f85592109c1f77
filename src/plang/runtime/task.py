"""A task of the scheduler's graph (`Task`: also its TaskId), a Group's member kernels,
and the errors a failed task raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import Error
from .cancel import CancelToken
from .pipes import DEFAULT_SLOTS

PENDING, QUEUED, DONE, FAILED, CANCELLED = range(5)
NOT_DISPATCHED = -1  # block index of a work item that has not been dispatched yet


class TaskError(Error, RuntimeError):
    """A task failed; ``task`` is the failed `Task`, ``__cause__`` the kernel's exception.
    ``partially_written``: the program's Out / InOut parameters the failed run may have
    written in part (set by `ChipWorker`; rendered as a note)."""

    def __init__(self, message: str, task: Task) -> None:
        super().__init__(message)
        self.task = task
        self.partially_written: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        if not self.partially_written:
            return []
        return ["note: the run did not complete; these Out / InOut arguments may be partially "
                f"written: {', '.join(self.partially_written)}"]


class TaskGroupError(Error, RuntimeError):
    """A member kernel of a Group failed, or a pipe between them timed out."""


@dataclass(frozen=True)
class GroupMember:
    """One kernel of a Group task: an AIC kernel (lane 0) or one AIV lane."""

    fn: Callable[..., Any]
    args: tuple = ()
    subblock_idx: int = 0


def kernel_name(fn: Any) -> str:
    return getattr(fn, "kernel_name", None) or getattr(fn, "__name__", None) or type(fn).__name__


class Task:
    """A submitted kernel launch; also its TaskId (pass it in ``deps=``)."""

    __slots__ = ("id", "name", "fn", "args", "members", "predicate", "blocks", "sync_start",
                 "allow_early_resolve", "pending", "dependents", "state", "done", "skipped",
                 "error", "blocks_left", "dep_ids", "pipe_slots", "barrier", "token")

    def __init__(self, task_id: int, name: str, fn: Any, args: tuple, members: tuple | None,
                 predicate: Callable[[], Any] | None, blocks: int | None, sync_start: bool,
                 allow_early_resolve: bool) -> None:
        self.id, self.name, self.fn, self.args, self.members = task_id, name, fn, args, members
        self.predicate, self.blocks, self.sync_start = predicate, blocks, sync_start
        self.allow_early_resolve = allow_early_resolve
        self.pending = 0
        self.dependents: list[Task] | None = []
        self.state = PENDING
        self.done = False
        self.skipped = False
        self.error: BaseException | None = None
        self.blocks_left = 0
        self.token: CancelToken | None = None  # shared by an SPMD task's blocks: one failure stops all
        self.dep_ids: tuple[int, ...] = ()
        self.pipe_slots = DEFAULT_SLOTS
        self.barrier: tuple[int, int] | None = None  # (AIC, AIV) participants of its syncalls

    def describe(self, block: int = NOT_DISPATCHED) -> str:
        where = f" block {block}" if block >= 0 else ""
        return f"task {self.id} ({self.name}){where}"

    def __repr__(self) -> str:
        state = ("pending", "queued", "done", "failed", "cancelled")[self.state]
        return f"<Task {self.id} {self.name} state={state}>"
