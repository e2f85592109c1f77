"""Compile workers: the LLVM stage of kernel compiles in child processes.

An LLVM failure may `abort()` its process; in a worker it ends only that worker, and the
compile raises `KernelCompileError` with LLVM's message (the worker's stderr) while the
user's process, its other kernels and its tensors carry on. Workers also let the kernels of
one program compile in parallel, one per core, as PyTorch Inductor's compile workers do.

`PLANG_COMPILE_WORKERS`: how many workers (default: the CPU count, at most 8); `0` runs the
LLVM stage in process (no isolation). Workers start on the first compile (`prestart` starts
them early, e.g. while a `@pl.jit` call parses and lowers), stay for the life of the process,
and a worker that died is replaced on the next request.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .native import KernelCompileError

ENV_VAR = "PLANG_COMPILE_WORKERS"
_STAGE = Path(__file__).with_name("llvm_stage.py")
# Load the stage by path: the worker never imports plang (or torch), and nothing of this
# package's directory shadows a module the MLIR bindings import.
_BOOT = ("import importlib.util as u, sys; s = u.spec_from_file_location('plang_llvm_stage', sys.argv[1]); "
         "m = u.module_from_spec(s); s.loader.exec_module(m); m.serve()")


def worker_count() -> int:
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return min(8, os.cpu_count() or 1)
    try:
        n = int(text)
    except ValueError:
        raise KernelCompileError(f"{ENV_VAR}={text!r}: expected a number of workers "
                                 "(0: compile in process)") from None
    if n < 0:
        raise KernelCompileError(f"{ENV_VAR}={text!r}: expected a number >= 0")
    return n


class _Worker:
    def __init__(self, scratch: str) -> None:
        self.stderr = tempfile.TemporaryFile(dir=scratch)
        self.proc = subprocess.Popen([sys.executable, "-c", _BOOT, str(_STAGE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)

    def request(self, payload: dict) -> dict | None:
        """The worker's reply, or None when it died (LLVM aborted)."""
        try:
            self.proc.stdin.write(json.dumps(payload) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        return json.loads(line) if line else None

    def death_report(self) -> str:
        """How the worker ended and the last lines it wrote to stderr (LLVM's message)."""
        code = self.proc.wait()
        self.stderr.seek(0)
        lines = [ln for ln in self.stderr.read().decode(errors="replace").splitlines() if ln.strip()]
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        return f"the compile worker died ({how}): " + (" | ".join(lines[-6:]) or "no message")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.stderr.close()


class WorkerPool:
    """A fixed number of worker processes shared by every compiling thread."""

    def __init__(self, size: int) -> None:
        self.scratch = tempfile.mkdtemp(prefix="plang-compile-")
        self.size = size
        self._idle: queue.Queue[_Worker] = queue.Queue()
        for _ in range(size):
            self._idle.put(_Worker(self.scratch))

    def compile_object(self, mlir_text: str, fn_name: str, cpu: str, features: list[str],
                       helper_library: str, what: str) -> str:
        """Path of the object file of `mlir_text`'s kernel (raises `KernelCompileError`)."""
        fd, obj = tempfile.mkstemp(suffix=".o", dir=self.scratch)
        os.close(fd)
        request = {"mlir": mlir_text, "fn": fn_name, "cpu": cpu, "features": features,
                   "helper_library": helper_library, "object": obj}
        worker = self._idle.get()
        try:
            reply = worker.request(request)
            if reply is None:
                report = worker.death_report()
                worker.close()
                worker = _Worker(self.scratch)
                raise KernelCompileError(f"{what}: LLVM failed: {report}")
        finally:
            self._idle.put(worker)
        if not reply["ok"]:
            raise KernelCompileError(f"{what}: {reply['error']}")
        return obj

    def close(self) -> None:
        while not self._idle.empty():
            self._idle.get().close()
        shutil.rmtree(self.scratch, ignore_errors=True)


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def pool() -> WorkerPool | None:
    """The process's worker pool (started on first use); None when workers are off."""
    global _pool
    with _pool_lock:
        if _pool is None:
            n = worker_count()
            if n == 0:
                return None
            _pool = WorkerPool(n)
            atexit.register(_pool.close)
        return _pool


def prestart() -> None:
    """Start the workers now, so their start-up overlaps front-end work."""
    pool()
