"""Re-run the program of a build folder (`CompiledProgram.from_dir`) on given inputs.

``debug/run.py`` calls `_main`, the command line: ``--platform``, ``--device-id``,
``--swimlane`` (a profile trace of the run, see `RunConfig.profiling`) and ``--dump-args
[LEVEL]`` (tensor dumps, `RunConfig.enable_dump_args`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable, Sequence

from ..compiled import CompiledProgram
from ..config import RunConfig


def replay(work_dir: str | Path, inputs: Sequence[Any], *, platform: str | None = None,
           config: RunConfig | None = None) -> Any:
    """Load the program built into `work_dir` and run it on `inputs` (Out tensors are written
    in place); returns its result."""
    compiled = CompiledProgram.from_dir(work_dir, platform)
    return compiled(*inputs, config=config or RunConfig(platform=compiled.platform))


def _main(argv: Sequence[str], *, work_dir: str | Path, inline_inputs: Callable[[], list],
          user_compare: Callable[..., Any], default_platform: str) -> int:
    parser = argparse.ArgumentParser(description=f"Re-run the plang program built in {work_dir}.")
    parser.add_argument("--platform", default=default_platform, help="the simulated chip to run on")
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--swimlane", action="store_true", help="write a swimlane trace of the run")
    parser.add_argument("--dump-args", type=int, nargs="?", const=1, default=0, choices=(0, 1, 2),
                        help="dump launch arguments: 1 the marked ones, 2 all")
    args = parser.parse_args(list(argv))
    config = RunConfig(platform=args.platform, device_id=args.device_id, profiling=args.swimlane,
                       enable_dump_args=args.dump_args)
    inputs = inline_inputs()
    replay(work_dir, inputs, platform=args.platform, config=config)
    user_compare(*inputs)
    print(f"replayed {Path(work_dir).name} on {args.platform}")
    return 0
