"""Runs mutant scripts for the mutation fuzz test, one per line of stdin, and writes one JSON
verdict per script to stdout: `{"verdict": ..., "detail": ...}`.

Verdicts: `ran` (no error), `checked` (the script's own torch check failed: the mutant computes
something else), `python` (the script's own Python failed, e.g. evaluating a mutated
annotation), `located` (a plang error with file:line in the script, or an unlocated one, such
as the runtime's `TaskError`, caused by one), and the failures
`internal` (any other exception, including `InternalCompilerError`), `unlocated` (a plang error
without a location in the script) and `internals` (a message showing `<... object at 0x...>`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import traceback


def verdict(path: str, exc: BaseException | None) -> tuple[str, str]:
    import plang as pl

    if exc is None:
        return "ran", ""
    text = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, AssertionError) and frames and (
            frames[-1].filename == path or "torch/testing" in frames[-1].filename):
        return "checked", text[:300]
    if " object at 0x" in text:
        return "internals", text
    if not isinstance(exc, pl.Error) and frames and frames[-1].filename == path:
        return "python", text[:300]
    located = exc
    while isinstance(located, pl.Error) and not located.span.is_known and isinstance(located.__cause__,
                                                                                     pl.Error):
        located = located.__cause__
    if isinstance(located, pl.InternalCompilerError) or not isinstance(located, pl.Error):
        return "internal", "".join(traceback.format_exception(exc)[-12:])
    if not (located.span.is_known and os.path.exists(located.span.filename)
            and os.path.samefile(located.span.filename, path)):
        return "unlocated", text
    return "located", text.splitlines()[0][:300]


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    for line in sys.stdin:
        path = line.strip()
        exc = None
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                runpy.run_path(path, run_name="__main__")
            except Exception as e:  # the verdict classifies every exception
                exc = e
        kind, detail = verdict(path, exc)
        out.write(json.dumps({"verdict": kind, "detail": detail}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
