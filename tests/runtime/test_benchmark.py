"""`plang.runtime.benchmark`: one registration, warmup launches dropped, per-launch timings."""

import pytest
import torch
from add_program import AddProgram

import plang as pl
from plang.runtime import RunConfig, benchmark


@pytest.fixture(scope="module")
def compiled():
    return pl.compile(AddProgram)


def test_measured_launches_have_device_and_host_times(compiled):
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    stats = benchmark(compiled, [a, b, c], rounds=4, warmup=2, config=RunConfig(platform="a2a3sim"))
    torch.testing.assert_close(c, a + b)
    assert stats.rounds == 4 and stats.warmup == 2 and len(stats.device_wall_us) == 4
    assert not stats.all_zero_device and stats.device_us_min > 0
    assert stats.device_us_min <= stats.device_us_median <= stats.device_us_max
    assert all(h >= d for h, d in zip(stats.host_wall_us, stats.device_wall_us))
    assert stats.per_round("host") == stats.host_wall_us


def test_bad_arguments_are_rejected(compiled):
    args = [torch.zeros(32, 64)] * 3
    with pytest.raises(ValueError, match="rounds must be positive"):
        benchmark(compiled, args, rounds=0)
    with pytest.raises(TypeError, match="either config"):
        benchmark(compiled, args, platform="a5sim", config=RunConfig())
    with pytest.raises(TypeError, match="single-chip CompiledProgram"):
        benchmark(object(), args)
