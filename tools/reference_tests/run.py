"""Run the reference implementation's own system tests (its `tests/st`, and `examples/`) on
plang, with only the import renamed; with `--docs`, the runnable blocks of its user manual.

    python tools/reference_tests/run.py REFERENCE [pytest arguments]
    python tools/reference_tests/run.py REFERENCE --docs [manual runner arguments]

REFERENCE is a checkout of hw-native-sys/pypto or its bare git directory (the search tool's
`fetch` leaves one at `.mirror/hw-native-sys+pypto/repo`). The tests are copied into a fresh
folder (`--work DIR` to choose it), `pypto` renamed `plang`, the reference's harness and
conftest files replaced by plang's stand-ins beside this script, and pytest run there (by
default on `runtime`; pass paths relative to `tests/st`, e.g. `runtime/ops -n 2`). The cases
of platforms plang does not simulate (A5) are skipped; a case passes when every output
matches its torch golden within the case's tolerances. `--docs` runs the manual's own runner
(`tests/docs/run_doc_examples.py`: each block marked `<!-- doctest: run -->`, with its page's
setup blocks, in a process of its own; e.g. `--docs --pages docs/en/user/tutorials`).
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = ("tests/st", "examples")
MANUAL = ("docs", "tests/docs")  # the user manual and the runner of its code blocks
DOC_RUNNER = Path("tests/docs/run_doc_examples.py")
RENAME = re.compile(r"\bpypto\b")


def _export(reference: Path, into: Path) -> None:
    """`tests/st` and `examples` of `reference` (a checkout or a bare git dir) under `into`."""
    if (reference / "HEAD").is_file() and (reference / "objects").is_dir():
        archive = subprocess.run(["git", "--git-dir", str(reference), "archive", "HEAD", *PARTS, *MANUAL],
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(into, filter="data")
        return
    for part in PARTS:
        if not (reference / part).is_dir():
            raise SystemExit(f"{reference} has no {part}/: give a checkout of hw-native-sys/pypto "
                             "or its git dir")
        shutil.copytree(reference / part, into / part)
    for part in MANUAL:
        if (reference / part).is_dir():
            shutil.copytree(reference / part, into / part)


def prepare(reference: Path, work: Path) -> Path:
    """The reference's tests under `work`, renamed and with plang's harness; returns tests/st."""
    _export(reference, work)
    for path in [*work.rglob("*.py"), *work.rglob("*.md")]:
        text = path.read_text(encoding="utf-8")
        renamed = RENAME.sub("plang", text)
        if renamed != text:
            path.write_text(renamed, encoding="utf-8")
    st = work / "tests" / "st"
    for conftest in st.rglob("conftest.py"):
        conftest.unlink()
    shutil.rmtree(st / "harness", ignore_errors=True)
    shutil.copytree(HERE / "harness", st / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(HERE / "conftest.py", st / "conftest.py")
    (st / "pytest.ini").write_text("[pytest]\npythonpath = . ../..\n", encoding="utf-8")
    return st


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path)
    parser.add_argument("--work", type=Path, help="folder for the renamed copy (default: a temporary one)")
    parser.add_argument("--docs", action="store_true", help="run the user manual's code blocks instead")
    args, pytest_args = parser.parse_known_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="plang-reference-tests-"))
    if args.work and work.exists():
        shutil.rmtree(work)
    st = prepare(args.reference.resolve(), work)
    if args.docs:
        if not (work / DOC_RUNNER).is_file():
            raise SystemExit(f"{args.reference} has no {DOC_RUNNER}: its manual has no runner")
        print(f"reference manual on plang in {work}", flush=True)
        return subprocess.call([sys.executable, str(DOC_RUNNER), *pytest_args], cwd=work)
    print(f"reference tests on plang in {st}", flush=True)
    return subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                            *(pytest_args or ["runtime"])], cwd=st)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
