"""Starting ranks: `python script.py` re-runs itself under `mpiexec`; under a launcher it joins.

`ensure_ranks(n)` is called when a distributed program first runs. Under an MPI launcher
(`mpiexec -n 4 python script.py`, a hostfile across machines) it checks the world has `n`
ranks and returns this rank's `RankComm`. A one-rank program runs in the calling process.
Started plainly, a program of more ranks runs
`mpiexec -n n python <the same argv>` (the mpich wheel's `mpiexec` beside the interpreter,
else the one on PATH) and exits with its status: every rank then runs the same script, so
one program text serves both launches. Ranks above 0 of a self-launched run print nothing
on stdout. A rank that raises prints the error under `rank r of n` and aborts the world, so
every rank ends and the launch fails. An abort may end the launcher before it has forwarded a
rank's stderr, so a self-launched rank also leaves its report in a file the launching process
prints once `mpiexec` returns.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from .runtime import DistributedError, RankComm, mpi

LAUNCHED_ENV = "PLANG_PLD_LAUNCHED"
REPORTS_ENV = "PLANG_PLD_REPORTS"
_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "HYDRA_CONTROL_FD",
                  LAUNCHED_ENV)

_comm: RankComm | None = None


def under_launcher() -> bool:
    """True when this process was started by an MPI launcher."""
    return any(v in os.environ for v in _LAUNCHER_VARS)


def mpiexec() -> str:
    """Path of the `mpiexec` to self-launch with."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise DistributedError("no mpiexec found: pip install 'plang[distributed]' (mpi4py and mpich)")
    return found


def ensure_ranks(n: int, timeout: float = 30.0) -> RankComm:
    """This rank's RankComm in a world of `n` ranks, self-launching when not under a launcher."""
    global _comm
    if n > 1 and not under_launcher():
        _relaunch(n)
    if _comm is None:
        mpi()
        _comm = RankComm(timeout=timeout)
        _install_excepthook(_comm)
        if os.environ.get(LAUNCHED_ENV) and _comm.rank > 0:
            sys.stdout = open(os.devnull, "w")
    if _comm.nranks != n:
        raise DistributedError(f"the program needs {n} ranks (DistributedConfig.device_ids) but the "
                               f"launcher started {_comm.nranks}: run mpiexec -n {n}")
    _comm.timeout = timeout
    return _comm


def _relaunch(n: int) -> None:
    script = sys.argv[0] if sys.argv else ""
    if not _rerunnable(script):
        raise DistributedError(f"a {n}-rank @pl.jit.host program started outside a script (here: "
                               f"{script or 'no script'}) cannot launch its ranks by re-running it: run "
                               f"the script plainly or under mpiexec -n {n}, or write the orchestrator "
                               f"as an L3 @pl.program, which runs on launched ranks from anywhere")
    sys.stdout.flush()
    with tempfile.TemporaryDirectory(prefix="plang-pld-") as reports:
        env = dict(os.environ, **{LAUNCHED_ENV: "1", REPORTS_ENV: reports})
        rc = subprocess.run([mpiexec(), "-n", str(n), sys.executable, *sys.argv], env=env).returncode
        for report in sorted(Path(reports).iterdir()):
            sys.stderr.write(report.read_text())
    raise SystemExit(rc)


def _rerunnable(script: str) -> bool:
    """Whether `script` (sys.argv[0]) is a user's script the ranks may re-run: not `-c`, a
    test runner (its re-run would be the whole session on every rank) or a notebook kernel."""
    path = Path(script)
    return (bool(script) and script != "-c" and path.is_file() and "pytest" not in path.parts
            and path.name not in ("pytest", "py.test") and "ipykernel" not in path.name)


def _install_excepthook(comm: RankComm) -> None:
    """An uncaught exception on any rank prints under the rank's name and aborts every rank."""
    if comm.nranks == 1:
        return

    def hook(kind, value, tb) -> None:
        report_and_abort(comm, value, tb)

    sys.excepthook = hook


def report_and_abort(comm: RankComm, error: BaseException, tb=None) -> None:
    """Print `error` as rank `comm.rank`'s failure on stderr and abort the whole world."""
    text = "".join(traceback.format_exception(type(error), error, tb or error.__traceback__))
    report = f"plang.distributed: rank {comm.rank} of {comm.nranks} failed:\n{text}"
    reports = os.environ.get(REPORTS_ENV)
    if reports:
        Path(reports, f"rank{comm.rank}.txt").write_text(report)
    else:
        sys.stderr.write(report)
        sys.stderr.flush()
        time.sleep(0.2)  # give the launcher a moment to forward stderr before the abort
    comm.comm.Abort(1)
