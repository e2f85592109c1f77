"""Programs that are one SPMD launch over their parameters (`plang.runtime.direct_launch`):
recognized in the generated orchestration, run without it with the same results and the
same errors; anything more (two launches, a host-side value, deps), a profiled or dumped run
keeps the orchestration."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.ir.enums import ParamDirection
from plang.runtime import RunConfig, TaskError
from plang.runtime.compiled import CompiledProgram
from plang.runtime.direct_launch import DirectLaunch, Literal, find
from plang.target import Device

N = 128
CONFIG = RunConfig(device=Device(clusters=2))
In, Out = ParamDirection.In, ParamDirection.Out


@pl.jit.incore(single_core=True)
def add_rows(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    """Block i writes rows [i * rows, (i + 1) * rows) of z = x + y."""
    i = pl.tile.get_block_idx()
    for r in pl.range(i * rows, (i + 1) * rows, 8):
        z = pl.store(pl.add(pl.load(x, [r, 0], [8, N]), pl.load(y, [r, 0], [8, N])), [r, 0], z)
    return z


@pl.jit
def one_launch(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    with pl.spmd(2):
        z = add_rows(x, y, z, rows)
    return z


@pl.jit
def two_launches(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    with pl.spmd(2):
        z = add_rows(x, y, z, rows)
    with pl.spmd(2):
        z = add_rows(z, y, z, rows)
    return z


@pl.jit
def host_value(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    with pl.spmd(2):
        z = add_rows(x, y, z, rows // 2)
    return z


def tensors(rows: int = 16) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.randn(2 * rows, N), torch.randn(2 * rows, N), torch.zeros(2 * rows, N)


def compiled(fn, rows=pl.RUNTIME) -> CompiledProgram:
    return fn.compile(*tensors(), rows, config=CONFIG)


def test_one_spmd_launch_over_the_parameters_is_direct() -> None:
    assert compiled(one_launch).direct_launch == DirectLaunch("add_rows", 2, (0, 1, 2, 3), (In, In, Out, In),
                                                              (2,), False)
    # a specialized scalar is a literal argument
    assert compiled(one_launch, 16).direct_launch.args == (0, 1, 2, Literal(16))


@pytest.mark.parametrize("fn", [two_launches, host_value])
def test_anything_more_keeps_the_orchestration(fn) -> None:
    assert compiled(fn).direct_launch is None


def test_find_refuses_what_it_does_not_know() -> None:
    kernels = {"k": object()}
    src = "def p(rt, a, b):\n    _t = rt.submit('k', (a, b, ), (In, Out, ), core_num=2)\n    return b\n"
    assert find(src, "p", kernels) == DirectLaunch("k", 2, (0, 1), (In, Out), (1,), False)
    assert find(src.replace("core_num=2", "core_num=2, deps=[_t]"), "p", kernels) is None
    assert find(src.replace("core_num=2", "core_num=a"), "p", kernels) is None
    assert find(src.replace("(a, b, )", "(a, b + 1, )"), "p", kernels) is None
    assert find(src, "p", {}) is None  # no such kernel
    assert find(src.replace("return b", "return a, b"), "p", kernels).many
    assert find("def p(rt, a):\n  return (", "p", kernels) is None


@pytest.mark.parametrize("config", [CONFIG, RunConfig(device=Device(clusters=2), kernel_timeout=60)],
                         ids=["native", "scheduled"])
def test_a_direct_program_runs_without_its_orchestration(config, monkeypatch: pytest.MonkeyPatch) -> None:
    """Natively, or (with a kernel timeout to watch) as one task through the scheduler."""
    program = compiled(one_launch)

    def refuse(*args):
        raise AssertionError("the orchestration ran")

    monkeypatch.setattr(program, "orchestration", refuse)
    for rows in (16, 8):  # the runtime scalar reaches the kernel: blocks of 16 and 8 rows
        x, y, z = tensors()
        assert program(x, y, z, rows, config=config) is z
        expected = torch.zeros_like(z)
        expected[:2 * rows] = (x + y)[:2 * rows]
        torch.testing.assert_close(z, expected)


@pytest.mark.parametrize("config", [RunConfig(device=Device(clusters=2), profiling=True),
                                    RunConfig(device=Device(clusters=2), enable_dump_args=2)])
def test_profiled_and_dumped_runs_take_the_orchestration(config, monkeypatch, tmp_path) -> None:
    config.profile_dir = config.dump_dir = str(tmp_path)
    program = compiled(one_launch)
    ran = []
    orchestration = program.orchestration
    monkeypatch.setattr(program, "orchestration", lambda *a: ran.append(1) or orchestration(*a))
    x, y, z = tensors()
    program(x, y, z, 16, config=config)
    torch.testing.assert_close(z, x + y)
    assert ran == [1]


def test_a_failing_launch_raises_as_the_orchestrated_one(monkeypatch: pytest.MonkeyPatch) -> None:
    program = compiled(one_launch)
    errors = []
    for direct in (True, False):
        if not direct:
            monkeypatch.setattr(CompiledProgram, "direct_launch", property(lambda self: None))
        x, y, z = tensors()
        with pytest.raises(TaskError) as info:
            program(x, y, z, 24, config=CONFIG)  # block 1 reads rows [24, 48) of 32
        errors.append((str(info.value).split(": ", 1)[1], type(info.value.__cause__),
                       info.value.partially_written))
    assert errors[0] == errors[1]
    assert "out of bounds" in errors[0][0] and errors[0][2] == ("z",)
