"""Programs built from module-level kernels, end to end: a `@pl.function` defined outside the
`@pl.program` joins it when called, an integer flag reaches a BOOL parameter, orchestration
slices are views, a kernel may return its outputs through an if / else, and a lane-unaware
vector kernel in a `pl.cluster()` runs once."""

import pytest
import torch

import plang as pl
from plang.dtypes import INT32, INT64
from plang.errors import ParserSyntaxError
from plang.ir.expr import Add, Var
from plang.ir.types import ScalarType
from plang.runtime import RunConfig, run

R, C = 8, 16


@pl.function(type=pl.FunctionType.InCore)
def scale_or_copy(x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                  double: pl.Scalar[pl.BOOL]) -> pl.Tensor[[R, C], pl.FP32]:
    t = pl.load(x, [0, 0], [R, C], target_memory=pl.MemorySpace.Vec)
    if double:
        res = pl.store(pl.add(t, t), [0, 0], out)
    else:
        res = pl.store(t, [0, 0], out)
    return res


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4 * R, C], pl.FP32],
             y: pl.Out[pl.Tensor[[4 * R, C], pl.FP32]]) -> pl.Tensor[[4 * R, C], pl.FP32]:
        for i in pl.range(4):
            if i % 2 == 0:
                flag = pl.yield_(1)
            else:
                flag = pl.yield_(0)
            xs = pl.slice(x, [R, C], [i * R, 0])
            ys = pl.slice(y, [R, C], [i * R, 0])
            ys = scale_or_copy(xs, ys, flag)
        return y


def test_a_module_level_kernel_joins_the_program_and_its_flag_converts():
    assert list(Blocks.functions) == ["main", "scale_or_copy"]
    assert "scale_or_copy(xs, ys, pl.cast(flag, pl.BOOL))" in Blocks.as_python()


def test_orchestration_slices_are_views_written_in_place():
    x = torch.randn(4 * R, C)
    y = torch.zeros(4 * R, C)
    config = RunConfig()
    run(Blocks, config=config)(x, y, config=config)
    want = x.clone()
    for i in (0, 2):
        want[i * R:(i + 1) * R] *= 2
    torch.testing.assert_close(y, want)


def test_two_external_functions_of_one_name_are_rejected():
    src = '''
import plang as pl

@pl.function(type=pl.FunctionType.InCore)
def main(x: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
    return x

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
        return main(x)
'''
    with pytest.raises(ParserSyntaxError, match="clashes"):
        pl.parse(src)


def test_integer_arithmetic_widens_to_the_wider_operand():
    a, b = Var("a", ScalarType(INT32)), Var("b", ScalarType(INT64))
    assert Add(a, b).dtype is INT64 and Add(b, a).dtype is INT64
    assert Add(a, a).dtype is INT32


@pl.function(type=pl.FunctionType.InCore)
def bump(acc: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
    t = pl.load(acc, [0, 0], [R, C], target_memory=pl.MemorySpace.Vec)
    acc = pl.store(pl.add(t, 1.0), [0, 0], acc)
    return acc


@pl.program
class Clustered:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, acc: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        with pl.cluster():
            acc = bump(acc)
        return acc


def test_a_lane_unaware_vector_kernel_in_a_cluster_runs_once():
    acc = torch.zeros(R, C)
    config = RunConfig()
    run(Clustered, config=config)(acc, config=config)
    torch.testing.assert_close(acc, torch.ones(R, C))
