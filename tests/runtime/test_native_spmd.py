"""Native SPMD launches (`plang.runtime.native_spmd`), through `@pl.jit`: the blocks of a
plain SPMD kernel start from one GIL-free call when the cores are idle; results match
torch with more blocks than cores; a failing block raises its own error (its siblings stop)
and the process, its worker and its next calls carry on; ``PLANG_NATIVE_SPMD=0`` and a
profiled run take the scheduler's Python path."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.runtime import BoundsError, RunConfig, TaskError
from plang.runtime.native_spmd import NativeSpmd
from plang.target import Device

N = 256
CONFIG = RunConfig(device=Device(clusters=2))


@pl.jit.incore(single_core=True)
def scale_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    """Block i scales rows [i * rows, (i + 1) * rows) of x by (i + 1)."""
    i = pl.tile.get_block_idx()
    for r in pl.range(i * rows, (i + 1) * rows, 8):
        t = pl.load(x, [r, 0], [8, N])
        y = pl.store(pl.mul(t, pl.cast(i + 1, pl.FP32)), [r, 0], y)
    return y


def spmd_program(blocks: int):
    @pl.jit
    def program(x: pl.Tensor, y: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
        with pl.spmd(blocks):
            y = scale_rows(x, y, rows)
        return y
    return program


def expected(x: torch.Tensor, blocks: int, rows: int) -> torch.Tensor:
    factor = torch.arange(1, blocks + 1, dtype=torch.float32).repeat_interleave(rows)
    return x[:blocks * rows] * factor[:, None]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The block counts of the native launches made while the test runs (after a first
    call on `CONFIG`'s worker has started its core threads)."""
    spmd_program(2)(torch.zeros(32, N), torch.zeros(32, N), 16, config=CONFIG)
    seen: list[int] = []
    run = NativeSpmd.run

    def spy(self, task):
        seen.append(task.blocks)
        return run(self, task)

    monkeypatch.setattr(NativeSpmd, "run", spy)
    return seen


@pytest.mark.parametrize("blocks", [2, 5])
def test_blocks_run_natively_and_match_torch(launches: list[int], blocks: int) -> None:
    rows = 16
    x = torch.randn(blocks * rows, N)
    y = torch.zeros_like(x)
    spmd_program(blocks)(x, y, rows, config=CONFIG)
    torch.testing.assert_close(y, expected(x, blocks, rows))
    assert launches == [blocks]


def test_a_failing_block_raises_its_error_and_the_process_carries_on(
        launches: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    rows = 16
    x = torch.randn(2 * rows, N)  # block 2 of 3 reads past the end of x
    y = torch.zeros(3 * rows, N)
    program = spmd_program(3)
    with pytest.raises(TaskError, match=r"tile.load out of bounds of tensor 'x'.*offset 32") as native:
        program(x, y, rows, config=CONFIG)
    assert isinstance(native.value.__cause__, BoundsError)
    x_ok = torch.randn(3 * rows, N)
    program(x_ok, y, rows, config=CONFIG)  # the same worker, the next call
    torch.testing.assert_close(y, expected(x_ok, 3, rows))
    assert launches == [3, 3]
    monkeypatch.setenv("PLANG_NATIVE_SPMD", "0")  # the Python path reports the same error
    with pytest.raises(TaskError) as python:
        program(x, y, rows, config=RunConfig(device=Device(clusters=2), dump_dir=str(tmp_path)))
    assert str(python.value.__cause__) == str(native.value.__cause__)
    assert launches == [3, 3]


def test_turned_off_or_profiled_runs_take_the_python_path(launches: list[int], tmp_path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rows = 16
    x = torch.randn(2 * rows, N)
    program = spmd_program(2)
    profiled = RunConfig(device=Device(clusters=2), profiling=True, profile_dir=str(tmp_path))
    y = torch.zeros_like(x)
    program(x, y, rows, config=profiled)
    torch.testing.assert_close(y, expected(x, 2, rows))
    monkeypatch.setenv("PLANG_NATIVE_SPMD", "0")
    y = torch.zeros_like(x)
    program(x, y, rows, config=RunConfig(device=Device(clusters=2), dump_dir=str(tmp_path)))
    torch.testing.assert_close(y, expected(x, 2, rows))
    assert launches == []
