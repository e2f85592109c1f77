"""L3 `@pl.program`s run on ranks launched from the process that calls them.

A process that is not one of a program's ranks (a test under pytest, a notebook, a script)
cannot re-run itself as the ranks the way a `@pl.jit.host` script does: its other work would
run once per rank. An L3 program is IR, so it travels instead. A `RankGroup` writes the
programs' printed text and the settings to a fresh folder and starts
`mpiexec -n N python -c "...serve(FOLDER)"`; its ranks parse the text, compile it and serve
calls until the group closes. A call writes its arguments to the folder and its number to
rank 0's stdin (rank 0 passes it on to the others); every rank runs the program, rank 0
hands back every tensor argument, as the broadcast at the end of the run left it, and what
the body returned, and those are copied into the caller's tensors. A failing rank's report
comes back in the `DistributedError` the call raises.

`run_job` is one call on a group of its own; `LaunchedWorker` is a prepared worker whose
group lives until it closes, so a persistent worker's windows outlive each call.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import torch

from .launch import LAUNCHED_ENV, REPORTS_ENV, mpiexec
from .prepared import PreparedWorker
from .runtime import DistributedError

_SETTINGS = "settings.pkl"


class RankGroup:
    """Ranks launched for the L3 programs of `compiled` (DistributedCompiledPrograms),
    serving calls until `close`. `prepared`: the ranks hold the programs in one prepared
    worker (`persistent`, `reset_windows`, `callbacks` as `prepare` takes them)."""

    def __init__(self, compiled: Sequence[Any], config: Any, *, prepared: bool = False,
                 callbacks: dict | None = None, persistent: bool = False, reset_windows: bool = True) -> None:
        self.name = compiled[0].host.program.name
        self.nranks = compiled[0].distributed_config.nranks
        self._folder = tempfile.TemporaryDirectory(prefix="plang-pld-job-")
        self.work = work = Path(self._folder.name)
        for i, c in enumerate(compiled):
            (work / f"program{i}.py").write_text(c.host.program.as_python())
        settings = {"programs": len(compiled), "distributed_config": compiled[0].distributed_config,
                    "config": config, "prepared": prepared, "callbacks": callbacks or {},
                    "persistent": persistent, "reset_windows": reset_windows}
        try:
            (work / _SETTINGS).write_bytes(pickle.dumps(settings))
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            self._folder.cleanup()
            raise DistributedError(f"{self.name}: the callbacks of a worker prepared outside its ranks "
                                   f"travel to them pickled, so they must be module-level functions "
                                   f"({e})") from None
        self._reports = work / "reports"
        self._reports.mkdir()
        self._stderr, self._echoed = work / "stderr", 0  # the ranks' stderr, and how much is shown
        env = dict(os.environ, **{LAUNCHED_ENV: "1", REPORTS_ENV: str(self._reports)})
        serve = f"import sys; from {__name__} import serve; serve(sys.argv[1])"
        with open(self._stderr, "wb") as err:
            self._proc = subprocess.Popen(
                [mpiexec(), "-n", str(self.nranks), sys.executable, "-c", serve, str(work)], env=env,
                stdin=subprocess.PIPE, stdout=sys.stdout if _has_fileno(sys.stdout) else None,
                stderr=err, text=True)
        self._calls = 0

    def call(self, index: int, args: tuple) -> Any:
        """Run program `index` on every rank with `args`; the tensors among `args` receive
        the run's results, and what the host body returned is returned."""
        if self._proc.poll() is not None:
            self._failed()
        k, self._calls = self._calls, self._calls + 1
        (self.work / f"call{k}.pkl").write_bytes(pickle.dumps(args))
        try:
            self._proc.stdin.write(f"{index} {k}\n")
            self._proc.stdin.flush()
        except BrokenPipeError:  # the ranks failed before they read it
            self._failed()
        result, pause = self.work / f"result{k}.pt", 0.0
        while not result.exists():
            if self._proc.poll() is not None:
                self._failed()
            time.sleep(pause)
            pause = min(2 * pause + 1e-4, 0.01)
        results, returned = torch.load(result)
        self._echo_stderr()
        for a, r in zip(args, results):
            if isinstance(a, torch.Tensor):
                a.copy_(r)
        return returned

    def close(self) -> None:
        """Stop the ranks (collective on their side: kept windows are freed) and remove the
        folder. Idempotent."""
        if self._proc.stdin.closed:
            return
        status = self._stop()
        if status != 0:
            self._failed()
        self._echo_stderr()
        self._folder.cleanup()

    def _echo_stderr(self) -> None:
        """Replay what the ranks wrote to stderr since the last echo (their warnings)."""
        text = self._stderr.read_bytes()
        sys.stderr.write(text[self._echoed:].decode(errors="replace"))
        self._echoed = len(text)

    def _stop(self) -> int:
        """Close the ranks' stdin (they stop once they read its end) and wait for them."""
        try:
            self._proc.stdin.close()
        except BrokenPipeError:  # they are gone already
            pass
        return self._proc.wait()

    def _failed(self) -> None:
        """Raise the ranks' failure reports (their stderr without any)."""
        status = self._stop()
        text = "".join(r.read_text() for r in sorted(self._reports.iterdir())) \
            or self._stderr.read_text(errors="replace")
        self._folder.cleanup()
        raise DistributedError(f"{self.name}: the run on {self.nranks} ranks failed "
                               f"(exit status {status}):\n{text.rstrip()}")


def run_job(compiled: Any, config: Any, args: tuple) -> Any:
    """Run the L3 DistributedCompiledProgram `compiled` once on ranks launched for it."""
    group = RankGroup([compiled], config)
    try:
        return group.call(0, args)
    finally:
        group.close()


class LaunchedWorker(PreparedWorker):
    """A prepared worker of L3 programs made outside their ranks: the ranks are launched once
    (a `RankGroup`) and serve every dispatch until `close`. Resident tensors live on the
    ranks, so `alloc_tensor` needs the script started under `mpiexec`; programs are fixed
    when it starts."""

    def __init__(self, compiled: Sequence[Any], config: Any = None, *, callbacks: dict | None = None,
                 persistent: bool = False, reset_windows: bool = True) -> None:
        super().__init__(compiled, config, callbacks=callbacks)
        self._group = RankGroup(self._programs, self.config, prepared=True, callbacks=self._callbacks,
                                persistent=persistent, reset_windows=reset_windows)
        self._started = list(self._programs)

    def _dispatch(self, compiled: Any, args: tuple) -> Any:
        if compiled not in self._started:
            raise ValueError(f"DistributedWorker.run: {compiled.host.name} was registered after this "
                             f"worker's ranks started; prepare it with the others (extra_compiled=)")
        return self._group.call(self._started.index(compiled), args)

    def alloc_tensor(self, shape: Sequence[int], dtype: Any, init: Any = None) -> Any:
        raise DistributedError(f"{self._group.name}: resident tensors of a worker on {self._group.nranks} "
                               f"ranks live on the ranks: start this script under mpiexec to use "
                               f"alloc_tensor")

    def close(self) -> None:
        """Stop the ranks and close every handle. Idempotent."""
        if not self.closed:
            super().close()
            self._group.close()


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, OSError, ValueError):  # pytest's capture, a notebook's stream
        return False


def serve(folder: str) -> None:
    """One launched rank: parse and compile the programs, then run the calls rank 0 reads
    from its stdin until it closes; rank 0 saves each call's tensors and returned value."""
    from ..ir.pipeline import compile_for
    from ..language.decorators import parse
    from .launch import ensure_ranks

    work = Path(folder)
    settings = pickle.loads((work / _SETTINGS).read_bytes())
    compiled = []
    for i in range(settings["programs"]):
        path = work / f"program{i}.py"
        program = parse(path.read_text(), filename=str(path))
        compiled.append(compile_for(program, settings["config"], settings["distributed_config"]))
    comm = ensure_ranks(len(settings["distributed_config"].device_ids))
    worker = None
    if settings["prepared"]:
        worker = compiled[0].prepare(extra_compiled=compiled[1:], callbacks=settings["callbacks"],
                                     persistent=settings["persistent"],
                                     reset_persistent_windows=settings["reset_windows"])
    while True:
        line = comm.comm.bcast(sys.stdin.readline() if comm.rank == 0 else None, root=0)
        if not line:
            break
        index, k = (int(v) for v in line.split())
        args = pickle.loads((work / f"call{k}.pkl").read_bytes())
        program = compiled[index]
        returned = program(*args) if worker is None else worker.run(program, *args)
        # a rank that failed aborts the job instead of arriving: no result is saved for a
        # call that did not complete on every rank (the caller then reads the failure report)
        comm.comm.barrier()
        if comm.rank == 0:
            saved = ([a if isinstance(a, torch.Tensor) else None for a in args], returned)
            torch.save(saved, work / f"result{k}.tmp")
            os.replace(work / f"result{k}.tmp", work / f"result{k}.pt")
    if worker is not None:
        worker.close()
