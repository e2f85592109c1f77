"""Differential test: seeded random well-typed programs (`_program_gen`), compiled and run with
every tensor argument inside guard zones, compared with the torch reference.

Each argument is a view into a larger buffer whose guard bytes before and after must come back
unchanged, and an input's own bytes too. `PLANG_FUZZ_N` sets the number of cases (default 96,
grouped `GROUP` to a program, each program run on `DRAWS` argument draws); `PLANG_FUZZ_SEED`
the seed.
"""

from __future__ import annotations

import os

import pytest
import torch
from _program_gen import Generator, draw, program

import plang as pl
from plang.debug import run_torch_ref

CASES = int(os.environ.get("PLANG_FUZZ_N", "96"))
SEED = int(os.environ.get("PLANG_FUZZ_SEED", "12"))
GROUP, DRAWS, GUARD = 8, 2, 64  # cases per program, argument draws per program, guard elements


def guarded(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(buffer, view): `t`'s values in the middle of a buffer of GUARD sentinel elements each side."""
    buf = torch.empty(2 * GUARD + t.numel(), dtype=t.dtype)
    buf.view(torch.uint8).fill_(0x5A)
    buf[GUARD:GUARD + t.numel()] = t.flatten()
    return buf, buf[GUARD:GUARD + t.numel()].view(t.shape)


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.uint8)


def check_program(index: int, cases, failures: list[str]) -> None:
    src = program(f"Diff{index}", cases)
    prog = pl.parse(src, filename=f"<differential {SEED}:{index}>")
    compiled = pl.compile(prog, entry="main")
    g = torch.Generator().manual_seed(SEED * 1000 + index)
    for d in range(DRAWS):
        values = draw(cases, g)
        expected = run_torch_ref(prog, *[v.clone() if isinstance(v, torch.Tensor) else v for v in values])
        expected = expected if isinstance(expected, tuple) else (expected,)
        pristine = {i: bits(guarded(v)[0]).clone()
                    for i, v in enumerate(values) if isinstance(v, torch.Tensor)}
        bufs, args = {}, []
        for i, v in enumerate(values):
            if isinstance(v, torch.Tensor):
                bufs[i], view = guarded(v)
                args.append(view)
            else:
                args.append(v)
        compiled(*args)
        params = [a for c in cases for a in c.args]
        where = f"program {index} draw {d}"
        for i, buf in bufs.items():
            raw, ref = bits(buf), pristine[i]
            edge = GUARD * buf.dtype.itemsize
            if not (torch.equal(raw[:edge], ref[:edge]) and torch.equal(raw[-edge:], ref[-edge:])):
                failures.append(f"{where}: guard zone of argument {params[i].name} changed\n{src}")
            if not params[i].out and not torch.equal(raw, ref):
                failures.append(f"{where}: input {params[i].name} was written\n{src}")
        out_positions = [i for i, a in enumerate(params) if a.out]
        for pos, exp in zip(out_positions, expected):
            got = args[pos]
            scale = 1.0 + exp.abs().max().item() if exp.numel() else 1.0
            if not torch.allclose(got.float(), exp.float(), rtol=1e-4, atol=1e-4 * scale):
                err = (got.float() - exp.float()).abs().max().item()
                failures.append(f"{where}: output {params[pos].name} differs by {err}\n{src}")


@pytest.mark.slow
def test_random_programs_match_the_torch_reference_and_keep_guard_zones():
    gen = Generator(SEED)
    failures: list[str] = []
    for index in range(-(-CASES // GROUP)):
        check_program(index, [gen.case() for _ in range(GROUP)], failures)
    assert not failures, f"{len(failures)} mismatches; first:\n{failures[0]}"
