"""Per-pass numeric bisection: run the torch reference of every dumped pass IR and compare.

`validate_pass_ir_codegen_results(dump, tensors, expected)` parses each `.py` file of a pass
dump folder (`passes_dump/` of a build compiled with `dump_passes=True`), or one such file,
writes its torch reference with shape checks on (`torch_codegen(..., check_shapes=True)`),
runs its entry function on fresh clones of `tensors` (matched to the parameters by name) and
compares the tensors named in `expected` after the run. The first pass whose result leaves
the tolerance is the one that changed the program's meaning; it raises there, naming the
file, the tensor and the difference.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping

import torch

from .torch_ref import as_program, entry_name, reference_function

_RENAMED = re.compile(r"(__\w+?_v\d+|_\d+)$")  # a suffix a pass may give a parameter's name


def validate_pass_ir_codegen_results(ir_dir: str | Path, tensors: Mapping[str, torch.Tensor],
                                     expected: Mapping[str, torch.Tensor], *, rtol: float = 5e-2,
                                     atol: float = 5e-2) -> dict[str, dict[str, float]]:
    """Check every pass IR file under `ir_dir` (or the one file it names) against `expected`:
    `tensors` are the entry's arguments by parameter name, `expected` the tensors they must
    hold after the run. Prints one line per tensor and pass; returns {pass file stem:
    {tensor name: max abs difference}}. Raises AssertionError at the first pass out of
    tolerance."""
    tensors = _tensor_dict("tensors", tensors)
    expected = _tensor_dict("expected", expected)
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    missing = sorted(set(expected) - set(tensors))
    if missing:
        raise KeyError(f"expected names {missing[0]!r}, which is not among the tensors {sorted(tensors)}")
    report: dict[str, dict[str, float]] = {}
    for path in _ir_files(Path(ir_dir)):
        run = {name: t.clone() for name, t in tensors.items()}
        _run_entry(path, run)
        print("=" * 20, path.stem, "=" * 20)
        report[path.stem] = {name: _compare(path, name, run, want, rtol, atol)
                             for name, want in expected.items()}
    return report


def _tensor_dict(what: str, value: Any) -> dict[str, torch.Tensor]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict of name -> torch.Tensor, got {type(value).__name__}")
    for name, t in value.items():
        if not isinstance(name, str) or not isinstance(t, torch.Tensor):
            raise TypeError(f"{what}[{name!r}] must be a torch.Tensor under a str name, "
                            f"got {type(t).__name__}")
    return dict(value)


def _tolerance(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 \
            or math.isinf(value):
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}")
    return float(value)


def _ir_files(path: Path) -> list[Path]:
    if not path.exists():
        raise FileNotFoundError(f"no pass IR at {path}")
    if path.is_file():
        if path.suffix != ".py":
            raise ValueError(f"{path}: a pass IR file is a .py file")
        return [path]
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".py")
    if not files:
        raise ValueError(f"{path} holds no .py pass IR files")
    return files


def _run_entry(path: Path, run: dict[str, torch.Tensor]) -> None:
    from ..language.decorators import loads

    program = as_program(loads(path))
    entry = program.functions[entry_name(program)]
    args = [_argument(path, p.name, run) for p in entry.params]
    fn = reference_function(program, entry.name, check_shapes=True)
    try:
        fn(*args)
    except Exception as e:
        raise RuntimeError(f"{path}: its torch reference failed: {type(e).__name__}: {e}") from e


def _argument(path: Path, param: str, run: Mapping[str, torch.Tensor]) -> torch.Tensor:
    for name in (param, _RENAMED.sub("", param)):
        if name in run:
            return run[name]
    raise KeyError(f"{path}: no tensor for parameter {param!r}; tensors has {sorted(run)}")


def _compare(path: Path, name: str, run: Mapping[str, torch.Tensor], want: torch.Tensor,
             rtol: float, atol: float) -> float:
    got = run[name]
    if got.shape != want.shape:
        raise AssertionError(f"{path}: tensor {name!r} has shape {tuple(got.shape)}, expected "
                             f"{tuple(want.shape)}")
    ok = torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    diff = (got.double() - want.double()).abs().nan_to_num(0.0).max().item() if got.numel() else 0.0
    print(f"validate tensor: {name!r}, max_abs_diff: {diff:.6e}, pass: {ok}")
    if not ok:
        raise AssertionError(f"{path}: tensor {name!r} differs from expected by up to {diff:.6e} "
                             f"(rtol={rtol:g}, atol={atol:g}): this pass changed the result")
    return diff
