"""Write ``<work_dir>/debug/run.py``: a script that re-runs the build folder's program.

Its ``_inline_inputs`` builds one argument per parameter from the compiled signature (random
values for inputs, zeros for ``pl.Out`` tensors, 16 for each dynamic dim); edit it, and
``_user_compare``, to experiment. Run it with ``python <work_dir>/debug/run.py --help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import torch

from ...ir.enums import ParamDirection
from ..param_spec import ParamSpec

DYNAMIC_EXTENT = 16


def write_run_script(work_dir: str | Path, signature: Sequence[ParamSpec], *,
                     platform: str | None = None) -> Path:
    """Write the replay script of the program built into `work_dir`; returns its path."""
    path = Path(work_dir) / "debug" / "run.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_render(signature, platform or "cpu"))
    return path


def _extent(d: int | str) -> int:
    if isinstance(d, int):
        return d
    _, _, k = d.partition("*")
    return DYNAMIC_EXTENT * int(k or 1)


def _init(p: ParamSpec) -> str:
    torch_dtype = str(p.dtype.to_torch())
    if p.shape is None:
        return f"{p.name} = {1.0 if p.dtype.is_float else 1}"
    shape = repr(tuple(_extent(d) for d in p.shape))
    if p.direction is ParamDirection.Out or p.dtype.to_torch() is torch.bool:
        return f"{p.name} = torch.zeros({shape}, dtype={torch_dtype})"
    if p.dtype.to_torch() in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        return f"{p.name} = torch.randn({shape}, dtype={torch_dtype})"
    if p.dtype.is_float:
        return f"{p.name} = torch.randn({shape}).to({torch_dtype})"
    return f"{p.name} = torch.randint(0, 8, {shape}).to({torch_dtype})"


def _render(signature: Sequence[ParamSpec], platform: str) -> str:
    names = ", ".join(p.name for p in signature)
    inits = "\n".join(f"    {_init(p)}" for p in signature) or "    pass"
    return f'''"""Re-run the plang program built in the folder above this one.

    python {{this file}} [--platform P] [--device-id N] [--swimlane] [--dump-args [LEVEL]]

Edit ``_inline_inputs`` to try other inputs and ``_user_compare`` to check the outputs (the
kernel writes its Out tensors in place). Written by plang.runtime.debug.run_script_writer.
"""

import sys
from pathlib import Path

import torch

from plang.runtime.debug.replay import _main

_WORK_DIR = Path(__file__).resolve().parent.parent


def _inline_inputs():
    """One argument per parameter, in call order."""
{inits}
    return [{names}]


def _user_compare({names}):
    """Called after the run with the same tensors; add assertions here."""


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:], work_dir=_WORK_DIR, inline_inputs=_inline_inputs,
                   user_compare=_user_compare, default_platform={platform!r}))
'''
