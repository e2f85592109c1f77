"""Mutation fuzz test: seeded AST mutants of the examples' DSL functions (`_mutator`), each
parsed, lowered, compiled and run by the example's own script in a worker process
(`_mutant_worker`), must either run or raise a documented plang error (a `plang.Error`
subclass, not `InternalCompilerError`) located at a line of the mutant, with no
`<... object at 0x...>` in its message. A mutant still running after `TIMEOUT` seconds is a
hang, also a failure.

Bounded by `PLANG_FUZZ_SECONDS` (default 40) and `PLANG_FUZZ_MUTANTS` (default 400), seeded by
`PLANG_FUZZ_SEED`; the long mode sets both higher.
"""

from __future__ import annotations

import collections
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _mutator import Mutator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("[0-9][0-9]_*.py"))
SECONDS = float(os.environ.get("PLANG_FUZZ_SECONDS", "40"))
MUTANTS = int(os.environ.get("PLANG_FUZZ_MUTANTS", "400"))
SEED = int(os.environ.get("PLANG_FUZZ_SEED", "7"))
TIMEOUT = 60.0
FAILURES = ("internal", "unlocated", "internals", "hang")


class Worker:
    """A `_mutant_worker` process, restarted after a hang."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env, self.proc = env, None

    def run(self, path: Path) -> dict:
        if self.proc is None:
            self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("_mutant_worker.py"))],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         env=self.env, cwd=path.parent)
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            return {"verdict": "hang", "detail": f"no verdict within {TIMEOUT} s (or the worker died)"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.mark.slow
def test_mutants_of_the_examples_raise_only_located_plang_errors(tmp_path):
    env = {**os.environ, "PLANG_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "src")}
    for extra in (ROOT / "examples").glob("*.cpp"):
        shutil.copy(extra, tmp_path)
    mutators = [(p.name, m) for i, p in enumerate(EXAMPLES)
                if (m := Mutator(p.read_text(), SEED * 100 + i)).has_dsl]
    worker = Worker(env)
    verdicts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    deadline = time.monotonic() + SECONDS
    try:
        for n in range(MUTANTS):
            if time.monotonic() > deadline:
                break
            name, mutator = mutators[n % len(mutators)]
            path = tmp_path / f"m{n}_{name}"
            path.write_text(mutator.mutant())
            result = worker.run(path)
            verdicts[result["verdict"]] += 1
            if result["verdict"] in FAILURES:
                failures.append(f"{path.name} [{result['verdict']}]: {result['detail']}\n{path.read_text()}")
    finally:
        worker.close()
    print(dict(verdicts))
    assert sum(verdicts.values()) >= min(MUTANTS, len(mutators)), f"too few mutants ran: {dict(verdicts)}"
    assert not failures, f"{len(failures)} of {sum(verdicts.values())} mutants failed; first:\n{failures[0]}"
