"""What every prepared set of distributed programs offers, wherever its ranks run: the
`PreparedWorker` surface (`run`, `rt(*args)`, `register`, `submit`, `close`, `with`), the
handles `register` gives and the completed run handles `submit` gives."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..runtime import RunConfig

if TYPE_CHECKING:
    from .host import DistributedCompiledProgram


class PreparedWorker(ABC):
    """What every prepared set of distributed programs offers around its `run`:
    ``rt.run(compiled, *args)`` picks the program; ``rt(*args)`` only where one is prepared.
    `callbacks` bind the SubWorkers of L3 `@pl.program`s by name (each called with the list
    of its arguments); every SubWorker declared with a `...` body must be bound, and every
    name must be a SubWorker of a prepared program."""

    closed = False

    def __init__(self, compiled: DistributedCompiledProgram | Sequence[DistributedCompiledProgram],
                 config: RunConfig | None = None, *,
                 callbacks: dict[str, Callable[..., Any]] | None = None) -> None:
        programs = list(compiled) if isinstance(compiled, (list, tuple)) else [compiled]
        if not programs:
            raise ValueError("DistributedWorker requires at least one compiled program")
        for p in programs:
            if getattr(p, "distributed_config", None) is None or not hasattr(p, "host"):
                raise TypeError(f"DistributedWorker takes DistributedCompiledPrograms (from "
                                f"@pl.jit.host ....compile(...)), got {type(p).__name__}")
            if p.distributed_config.device_ids != programs[0].distributed_config.device_ids:
                raise ValueError(f"DistributedWorker: {p.host.name} runs on device_ids "
                                 f"{p.distributed_config.device_ids}, {programs[0].host.name} on "
                                 f"{programs[0].distributed_config.device_ids}: one worker serves one set")
        callbacks = dict(callbacks or {})
        unknown = sorted(set(callbacks) - {n for p in programs for n in p.host.sub_workers})
        if unknown:
            raise ValueError(f"callbacks names {unknown} are not sub-workers of any prepared program")
        for p in programs:
            missing = [n for n in p.host.runtime_bound if n not in callbacks]
            if missing:
                raise ValueError(f"SubWorker {missing[0]!r} of {p.host.name} is runtime-bound (declared "
                                 f"with a `...` body): bind it with "
                                 f"prepare(callbacks={{{missing[0]!r}: fn}})")
        self._callbacks = callbacks
        self.config = config if config is not None else programs[0].config
        self._programs = programs
        self._handles: list[PreparedProgram] = []

    def _check_open(self, op: str) -> None:
        if self.closed:
            raise RuntimeError(f"DistributedWorker.{op}() called after close()")

    def run(self, compiled: DistributedCompiledProgram, *args: Any, config: RunConfig | None = None) -> Any:
        """Run prepared program `compiled` on `args` on every rank; returns what its host body
        returns, or, called with only its non-Out arguments, the Out tensors it allocated.
        `config` is the reference's per-dispatch settings, accepted (the worker keeps its own)."""
        self._check_open("run")
        if compiled not in self._programs:
            name = getattr(getattr(compiled, "host", None), "name", type(compiled).__name__)
            raise ValueError(f"DistributedWorker.run: {name} is not prepared on this worker "
                             f"(prepare it with DistributedWorker([...]) or register())")
        args, allocated = compiled.host.with_outputs(args)
        return returned(self._dispatch(compiled, args), allocated)

    @abstractmethod
    def _dispatch(self, compiled: DistributedCompiledProgram, args: tuple) -> Any:
        """Run `compiled` on every rank with its whole argument list; what its body returns."""

    def register(self, compiled: DistributedCompiledProgram) -> PreparedProgram:
        """Prepare one more program on this worker; returns a handle that runs it."""
        self._check_open("register")
        if compiled not in self._programs:
            self._programs.append(compiled)
        self._handles.append(PreparedProgram(self, compiled))
        return self._handles[-1]

    def submit(self, compiled: DistributedCompiledProgram, *args: Any, config: RunConfig | None = None
               ) -> DistributedRunHandle:
        """`run`, as the reference's asynchronous dispatch: the run ends before this returns,
        so the handle is complete; its `result()` raises what the run raised."""
        try:
            self.run(compiled, *args, config=config)
        except Exception as e:  # the reference raises a dispatch's failure from result()
            return DistributedRunHandle(e)
        return DistributedRunHandle()

    def __call__(self, *args: Any, config: RunConfig | None = None) -> Any:
        if len(self._programs) > 1:
            raise TypeError(f"rt(*args) is ambiguous with {len(self._programs)} prepared programs "
                            f"({', '.join(p.host.name for p in self._programs)}): "
                            f"call rt.run(compiled, *args)")
        return self.run(self._programs[0], *args)

    def close(self) -> None:
        """Close every handle. Idempotent."""
        self.closed = True
        for handle in self._handles:
            handle.closed = True

    def __enter__(self) -> PreparedWorker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def returned(result: Any, allocated: tuple | None) -> Any:
    """What a distributed call gives back: the Out tensors a return-style call allocated
    (one alone, several as a tuple), else what the host body returned."""
    if allocated:
        return allocated[0] if len(allocated) == 1 else allocated
    return result


class PreparedProgram:
    """A program registered on a `PreparedWorker`; call it with the program's arguments."""

    def __init__(self, worker: PreparedWorker, compiled: DistributedCompiledProgram) -> None:
        self.worker, self.compiled = worker, compiled
        self.closed = False  # set when its worker closes

    def __call__(self, *args: Any) -> None:
        self.worker.run(self.compiled, *args)


class DistributedRunHandle:
    """What `DistributedWorker.submit` returns: a dispatch that has completed. `result()`
    (or `wait()`) raises its error, if it had one; `done` is True."""

    def __init__(self, error: BaseException | None = None) -> None:
        self._error = error

    @property
    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> None:
        if timeout is not None and not (timeout >= 0 and math.isfinite(timeout)):
            raise ValueError("DistributedRunHandle timeout must be a non-negative finite number of seconds")
        if self._error is not None:
            raise self._error

    wait = result
