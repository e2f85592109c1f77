"""A failed task leaves no garbage, through `@pl.jit`: when one kernel of a Group fails,
every kernel of it stops before writing again and the run ends at once (not after
`pipe_timeout`); `RunConfig.kernel_timeout` cancels a runaway kernel at its next loop
back-edge; the error names the Out / InOut arguments that may be partially written."""

from __future__ import annotations

import time

import pytest
import torch

import plang as pl
from plang.runtime import BoundsError, KernelCancelled, RunConfig, TaskError


@pl.jit.incore
def spin_kernel(a: pl.Tensor, c: pl.InOut[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    x = pl.load(a, [0, 0], [8, 64])
    for i in pl.range(n):
        t = pl.load(c, [0, 0], [8, 64])
        c = pl.store(pl.add(t, x), [0, 0], c)
    return c


@pl.jit
def spin(a: pl.Tensor, c: pl.InOut[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    c = spin_kernel(a, c, n)
    return c


@pl.jit
def mixed(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], off: pl.Scalar[pl.INDEX],
          n: pl.Scalar[pl.INDEX]):
    """A Group (matmul on the AIC, the add and store on an AIV lane) storing n row blocks."""
    with pl.at(level=pl.Level.CORE_GROUP):
        for j in pl.range(n):
            acc = pl.matmul(a, b, out_dtype=pl.FP32)
            c = pl.assemble(c, pl.add(acc, 1.0), [(j % 4) * 16 + off, 0])
    return c


def test_kernel_timeout_must_be_positive() -> None:
    assert RunConfig().kernel_timeout is None
    for bad in (0, -1.0):
        with pytest.raises(ValueError, match="kernel_timeout must be positive or None"):
            RunConfig(kernel_timeout=bad)


def test_watchdog_cancels_a_runaway_kernel_at_its_loop_back_edge() -> None:
    a, c = torch.ones(8, 64), torch.zeros(8, 64)
    config = RunConfig(kernel_timeout=0.3)
    spin(a, c, 2, config=config)  # compiled and warm
    assert torch.equal(c, torch.full((8, 64), 2.0))
    start = time.monotonic()
    with pytest.raises(TaskError, match=r"ran longer than RunConfig.kernel_timeout = 0.3 s") as info:
        spin(a, c, 10**15, config=config)
    assert time.monotonic() - start < 10
    assert isinstance(info.value.__cause__, KernelCancelled)
    assert info.value.partially_written == ("c",)  # InOut: partially written; `a` (In) is not
    assert "may be partially written: c" in str(info.value)
    assert bool((c == c[0, 0]).all()) and c[0, 0] > 2  # whole iterations only, then it stopped


def test_a_failing_group_member_stops_the_others_before_they_write() -> None:
    """Lane 0 fails its first store (offset -16); the AIC blocked on its pipe and the lane's
    later, in-bounds iterations are cancelled: nothing is written, and the run ends without
    waiting for the pipe timeout."""
    a, b = torch.randn(16, 32), torch.randn(32, 64)
    c = torch.zeros(64, 64)
    mixed(a, b, c, 0, 4)
    torch.testing.assert_close(c, (a @ b + 1).repeat(4, 1), rtol=1e-4, atol=1e-4)
    c = torch.full((64, 64), 7.0)
    start = time.monotonic()
    with pytest.raises(TaskError, match=r"offset -16 is negative") as info:
        mixed(a, b, c, -16, 4, config=RunConfig(pipe_timeout=20.0))
    assert time.monotonic() - start < 10
    assert isinstance(info.value.__cause__.__cause__, BoundsError)
    assert bool((c == 7).all())


def test_watchdog_cancels_a_whole_group() -> None:
    a, b = torch.randn(16, 32), torch.randn(32, 64)
    c = torch.zeros(64, 64)
    config = RunConfig(kernel_timeout=0.5, pipe_timeout=20.0)
    mixed(a, b, c, 0, 4, config=config)
    start = time.monotonic()
    with pytest.raises(TaskError, match="ran longer than RunConfig.kernel_timeout = 0.5 s"):
        mixed(a, b, c, 0, 10**12, config=config)
    assert time.monotonic() - start < 15


@pl.jit.incore
def rows_kernel(a: pl.Tensor, c: pl.InOut[pl.Tensor], bad: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]):
    b = pl.tile.get_block_idx()
    x = pl.load(a, [b * 8 + bad * (1 - b) * 100, 0], [8, 64])  # block 0 reads past `a` when bad
    for i, (y,) in pl.range(n * b, init_values=(x,)):  # block 1 works a while before it stores
        y2 = pl.add(y, 0.0)
        y3 = pl.yield_(y2)
    c = pl.store(y3, [b * 8, 0], c)
    return c


@pl.jit
def rows(a: pl.Tensor, c: pl.InOut[pl.Tensor], bad: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]):
    with pl.spmd(2):
        c = rows_kernel(a, c, bad, n)
    return c


def test_a_failing_spmd_block_stops_its_siblings_before_they_write() -> None:
    a, c = torch.randn(16, 64), torch.zeros(16, 64)
    rows(a, c, 0, 3)
    assert torch.equal(c, a)
    c.zero_()
    start = time.monotonic()
    with pytest.raises(TaskError) as info:
        rows(a, c, 1, 10**12)
    assert time.monotonic() - start < 10  # block 1 was cancelled, not run to its end
    assert isinstance(info.value.__cause__, BoundsError)  # block 0's own error, not the cancellation
    assert torch.equal(c, torch.zeros(16, 64))  # and stopped before its store
