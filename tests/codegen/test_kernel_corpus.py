"""The pass corpus end to end: every program of `tests/passes/programs/` goes through
`pl.compile` (the default pass pipeline with every property verified, each core function
compiled to native code, the orchestration generated), runs on the simulated chip through
the runtime, and its outputs match the torch reference of the pre-pass program.

Tolerances (relative to the reference, atol scaled by its largest magnitude): programs on
FP32 data only: rtol 1e-5, atol 1e-5 * max|ref| (vector exp / rsqrt approximations and a
different summation order). Programs with BF16 tensors: rtol 1e-2, atol 1e-3 * max|ref|
(matmuls accumulate in FP32 on both sides, but a BF16 rounding of an intermediate can land on
the other side of a tie, one BF16 ulp = 2^-8 relative)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref
from plang.dtypes import BF16
from plang.ir import Program, TensorType
from plang.ir.types import dim_value
from plang.runtime import RunConfig

PROGRAMS = Path(__file__).parents[1] / "passes" / "programs"
DYNAMIC_EXTENT = 96  # every dynamic dim of the corpus is tiled by 32


def parse(name: str) -> Program:
    path = PROGRAMS / name
    return pl.parse(path.read_text(), filename=str(path))


def random_args(fn, seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    args = []
    for p in fn.params:
        assert isinstance(p.type, TensorType), f"{fn.name}: corpus entries take tensors only"
        shape = [dim_value(d) if dim_value(d) is not None else DYNAMIC_EXTENT for d in p.type.shape]
        args.append((torch.rand(*shape, generator=g) * 2 - 1).to(p.type.dtype.to_torch()))
    return args


def tolerances(fn) -> tuple[float, float]:
    if any(p.type.dtype is BF16 for p in fn.params):
        return 1e-2, 1e-3
    return 1e-5, 1e-5


@pytest.mark.parametrize("name", sorted(p.name for p in PROGRAMS.glob("*.py")))
def test_corpus_program_runs_and_matches_the_reference(name):
    program = parse(name)
    compiled = pl.compile(program, config=RunConfig(verify=True), entry="main")  # default pipeline, verified
    lowered = compiled.lowered
    core = {f.name for f in lowered.functions.values() if f.func_type.is_core}
    assert core and set(compiled.kernels) == core
    entry = lowered.get(compiled.name)
    rtol, atol = tolerances(entry)
    args = random_args(entry, seed=len(name))
    expected = run_torch_ref(program, *[a.clone() for a in args])
    got = compiled(*args)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, rtol=rtol, atol=atol * expected.abs().max().item())
