"""`Worker`: the reference runtime's manual-dispatch worker, running on plang's simulated chip.

``Worker(level=2, device_id=..., platform=..., runtime=compiled.runtime_name)``; ``init()``;
``cid = register(compiled.chip_callable)``; ``run(cid, orch_args, call_config)`` launches the
program with the arguments of ``compiled.build_orch_args(..., worker=this)`` on a
`plang.runtime.ChipWorker` with the call config's ``aicpu_thread_num`` scheduler threads;
``unregister(cid)``; ``close()`` releases every chip it opened.
"""

from __future__ import annotations

from plang.runtime import ChipWorker, RunConfig
from plang.runtime.chip_callable import RUNTIME_NAME, CallConfig, ChipCallable, OrchArgs


class Worker:
    def __init__(self, level: int = 2, device_id: int = 0, platform: str = "a2a3sim",
                 runtime: str = RUNTIME_NAME) -> None:
        if level != 2:
            raise ValueError(f"Worker: only level 2 (one chip) is supported, got level={level}")
        if runtime != RUNTIME_NAME:
            raise ValueError(f"Worker: runtime {runtime!r} is not available; plang runs {RUNTIME_NAME!r} "
                             "(compiled.runtime_name)")
        RunConfig(platform=platform, device_id=device_id).resolved_device()  # a known platform
        self.level, self.device_id, self.platform, self.runtime = level, device_id, platform, runtime
        self._chips: dict[tuple, ChipWorker] = {}  # (threads, profiling, dump level) -> its chip
        self._callables: dict[int, ChipCallable] = {}
        self._next_id = 0
        self._state = "new"

    def init(self) -> None:
        self._check("init", "new")
        self._state = "open"

    def register(self, callable_: ChipCallable) -> int:
        self._check("register", "open")
        if not isinstance(callable_, ChipCallable):
            raise TypeError(f"register() takes compiled.chip_callable, got {type(callable_).__name__}")
        cid, self._next_id = self._next_id, self._next_id + 1
        self._callables[cid] = callable_
        return cid

    def unregister(self, cid: int) -> None:
        self._check("unregister", "open")
        self._callable(cid)
        del self._callables[cid]

    def run(self, cid: int, orch_args: OrchArgs, config: CallConfig | None = None) -> None:
        """Launch registered program `cid` on `orch_args` and wait; Out tensors are written in
        place (read them from the ``coerced`` list of ``build_orch_args``)."""
        self._check("run", "open")
        program = self._callable(cid).program
        if not isinstance(orch_args, OrchArgs) or orch_args.worker is not self:
            raise TypeError("run() takes the orch_args of compiled.build_orch_args(..., worker=<this one>)")
        config = config or program.build_call_config()
        chip = self._chip(config)
        chip.register(program)(*orch_args.args)

    def close(self) -> None:
        for chip in self._chips.values():
            chip.close()
        self._chips.clear()
        self._callables.clear()
        self._state = "closed"

    def _chip(self, config: CallConfig) -> ChipWorker:
        key = (config.aicpu_thread_num, config.enable_profiling, config.enable_dump_args)
        chip = self._chips.get(key)
        if chip is None:
            chip = self._chips[key] = ChipWorker(RunConfig(
                platform=self.platform, device_id=self.device_id, workers=config.aicpu_thread_num,
                profiling=config.enable_profiling, enable_dump_args=config.enable_dump_args))
        return chip

    def _callable(self, cid: int) -> ChipCallable:
        if cid not in self._callables:
            raise KeyError(f"Worker: no registered callable with id {cid}")
        return self._callables[cid]

    def _check(self, what: str, state: str) -> None:
        if self._state != state:
            need = "before init()" if state == "new" else "after init() and before close()"
            raise RuntimeError(f"Worker.{what}() is only valid {need} (the worker is {self._state})")

    def __repr__(self) -> str:
        return f"<simpler.worker.Worker level={self.level} platform={self.platform} {self._state}>"


__all__ = ["Worker"]
