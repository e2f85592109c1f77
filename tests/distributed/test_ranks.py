"""Multi-rank runs end to end: the tests start the ranks themselves, 2 ranks as
`python programs.py 2` (it launches itself under mpiexec) and 4 under `mpiexec -n 4`; every
`pld` op is checked against torch inside the ranks."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

from plang.distributed.launch import mpiexec  # noqa: E402

HERE = Path(__file__).parent


def run(*argv: str, launcher: int | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, *argv]
    if launcher is not None:
        cmd = [mpiexec(), "-n", str(launcher), *cmd]
    return subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("nranks, launcher", [(2, None), (4, 4)], ids=["2-self-launched", "4-mpiexec"])
def test_every_pld_op_matches_torch(nranks, launcher):
    done = run("programs.py", str(nranks), launcher=launcher)
    assert done.returncode == 0, done.stderr[-4000:]
    # (the ranks share stderr: their lines may interleave)
    assert sorted(int(r) for r in re.findall(r"rank (\d+) ok", done.stderr)) == list(range(nranks))
    assert done.stderr.count(f"rank programs ok on {nranks} ranks") == nranks


def test_a_launcher_with_the_wrong_rank_count_is_named():
    done = run("rank_fail.py", "4", "0", launcher=2)
    assert done.returncode != 0
    assert "needs 4 ranks" in done.stderr and "started 2" in done.stderr


def test_a_rank_that_raises_ends_every_rank():
    start = time.monotonic()
    done = run("rank_fail.py", "2", "1")
    assert done.returncode != 0
    assert "rank 1 of 2 failed" in done.stderr and "ValueError: boom on purpose" in done.stderr
    assert time.monotonic() - start < 30  # rank 0 was waiting with a 60 s timeout: it was ended


def test_a_hung_wait_fails_naming_the_rank_and_signal():
    done = run("rank_hang.py")
    assert done.returncode != 0
    assert re.search(r"WaitTimeout: rank \d: pld.system.wait on signal 'ready_buf' at \[1, 0\] timed out "
                     r"after 1.0s: value 0, waiting for Ge 1", done.stderr), done.stderr[-3000:]


def test_a_host_program_on_the_reference_import_path_runs():
    """`import plang.language as pl` in a host body: its `pl.range` is Python's range there too."""
    done = run("reference_path.py")
    assert done.returncode == 0, done.stderr[-4000:]
    assert "reference path ok" in done.stdout


def test_a_multi_rank_host_program_under_pytest_says_how_to_run_it():
    """Re-running pytest as the ranks would run the whole session on every rank: refused."""
    from plang.distributed.launch import ensure_ranks
    from plang.distributed.runtime import DistributedError

    with pytest.raises(DistributedError, match=r"2-rank @pl.jit.host program started outside a script "
                                               r"\(here: .*\) .* or write the orchestrator as an L3 "
                                               r"@pl.program"):
        ensure_ranks(2)
