"""Pass-pipeline speed: the Default pipeline (with its verifiers) on the corpus programs of
tests/passes/programs, median over repeated runs. Target: flash attention < 150 ms.

    python benchmarks/passes.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import plang as pl
from plang.passes import PassManager

PROGRAMS = Path(__file__).resolve().parents[1] / "tests" / "passes" / "programs"


def lower_ms(name: str, repeat: int = 15) -> float:
    program = pl.loads(str(PROGRAMS / f"{name}.py"))
    PassManager().run(program)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        PassManager().run(program)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def rows() -> list[tuple[str, float, float, str, str]]:
    """(workload, plang, target, unit, peer name) rows for benchmarks/run.py."""
    return [(f"lower {name} (Default pipeline)", lower_ms(name), target, "ms", "target")
            for name, target in (("softmax", 150.0), ("flash_attention", 150.0))]


def main() -> None:
    print(f"{'workload':<44}{'median ms':>12}{'target ms':>11}")
    for name, ours, target, _, _ in rows():
        print(f"{name:<44}{ours:>12.2f}{target:>11.1f}")


if __name__ == "__main__":
    main()
