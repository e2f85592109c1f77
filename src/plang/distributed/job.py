"""An L3 `@pl.program` run on fresh ranks from the process that calls it.

A process that is not one of a program's ranks (a test under pytest, a notebook, a script)
cannot re-run itself as the ranks the way a `@pl.jit.host` script does: its other work would
run once per rank. An L3 program is IR, so it travels instead. `run_job` writes the program's
printed text, the call's arguments and the run's settings to a fresh folder, runs
`mpiexec -n N python -c "...rank_main(FOLDER)"`, whose ranks parse the text, compile it
and run it as any launched program, and copies what rank 0 hands back — every tensor argument,
as the broadcast at the end of the run left it — into the caller's tensors. A failing rank's
report comes back in the `DistributedError` the call raises.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

from .launch import LAUNCHED_ENV, REPORTS_ENV, mpiexec
from .runtime import DistributedError

_JOB, _RESULT, _PROGRAM = "job.pkl", "result.pt", "program.py"


def run_job(program: Any, nranks: int, distributed_config: Any, config: Any, args: tuple) -> Any:
    """Run L3 program `program` on `nranks` launched ranks with `args`; the tensors among
    `args` receive the run's results, and what the host body returned is returned."""
    with tempfile.TemporaryDirectory(prefix="plang-pld-job-") as folder:
        work = Path(folder)
        (work / _PROGRAM).write_text(program.as_python())
        with open(work / _JOB, "wb") as f:
            pickle.dump({"args": args, "distributed_config": distributed_config, "config": config}, f)
        reports = work / "reports"
        reports.mkdir()
        env = dict(os.environ, **{LAUNCHED_ENV: "1", REPORTS_ENV: str(reports)})
        rank_main = f"import sys; from {__name__} import rank_main; rank_main(sys.argv[1])"
        run = subprocess.run([mpiexec(), "-n", str(nranks), sys.executable, "-c", rank_main, folder],
                             env=env, stdout=sys.stdout if _has_fileno(sys.stdout) else None,
                             stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            text = "".join(r.read_text() for r in sorted(reports.iterdir())) or run.stderr
            raise DistributedError(f"{program.name}: the run on {nranks} ranks failed "
                                   f"(exit status {run.returncode}):\n{text.rstrip()}")
        sys.stderr.write(run.stderr)  # the ranks' warnings
        results, returned = torch.load(work / _RESULT)
    for a, r in zip(args, results):
        if isinstance(a, torch.Tensor):
            a.copy_(r)
    return returned


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, OSError, ValueError):  # pytest's capture, a notebook's stream
        return False


def rank_main(folder: str) -> None:
    """One launched rank of a job: parse, compile and run the program; rank 0 saves the
    tensors the run leaves in its arguments and what the body returned."""
    from ..ir.pipeline import compile_for
    from ..language.decorators import parse
    from .launch import ensure_ranks

    work = Path(folder)
    with open(work / _JOB, "rb") as f:
        job = pickle.load(f)
    program = parse((work / _PROGRAM).read_text(), filename=str(work / _PROGRAM))
    compiled = compile_for(program, job["config"], job["distributed_config"])
    args = job["args"]
    returned = compiled(*args)
    if ensure_ranks(len(job["distributed_config"].device_ids)).rank == 0:
        torch.save(([a if isinstance(a, torch.Tensor) else None for a in args], returned), work / _RESULT)
