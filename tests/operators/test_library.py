"""`JitOperator`: an operator whose build is a `@pl.jit` program, called with torch tensors;
per-call values as runtime scalars (no recompile), build memo by `array_key()`, the layout
guard, `when=` and `Select` operands, shape checks before compiling."""

import pytest
import torch

import plang as pl
from plang.jit.compiler import COUNTERS
from plang.operators import In, JitOperator, Out, Select, Unresolvable, param, per_call, tunable
from plang.operators.kernels import RowSoftmax
from plang.runtime import RunConfig
from plang.target import Device, set_current_device

DEV = Device(clusters=2)
CONFIG = RunConfig(device=DEV)


class Scale(JitOperator):
    """y[:valid] = x[:valid] * factor, `tile` elements a step."""

    M: int = param()
    factor: float = param(default=1.0, array=True)
    tile: int | None = tunable(domain=(8, 16, 32))
    x = In(M, dtype=pl.FP32, obj_shape=tile)
    y = Out(M, dtype=pl.FP32)
    valid = per_call(bounds=M)

    def resolve(self, dev):
        return self.replace(tile=self.tile or 16)

    def build(self, cores):
        tile, factor = cores.tile, cores.factor

        @pl.jit.incore
        def scale_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor], valid: pl.Scalar[pl.INT32]):
            for r in pl.range(0, valid, tile):
                y = pl.store(pl.mul(pl.load(x, [r], [tile]), factor), [r], y)
            return y

        @pl.jit
        def scale(x: pl.Tensor, y: pl.Out[pl.Tensor], valid: pl.Scalar[pl.INT32]):
            y = scale_kernel(x, y, valid)
            return y

        return scale

    def reference(self, x, valid):
        y = torch.zeros_like(x)
        y[:valid] = x[:valid] * self.factor
        return y


class Linear(JitOperator):
    """c = a @ b (+ bias), b given [K, N] or, where b_col_maj, [N, K]."""

    M: int = param()
    N: int = param()
    K: int = param()
    has_bias: bool = param(default=False, array=True)
    b_col_maj: bool = param(default=False, array=True)
    a = In(M, K, dtype=pl.FP32)
    b = In(Select(b_col_maj, (N, K), (K, N)), dtype=pl.FP32)
    bias = In(N, dtype=pl.FP32, when=has_bias)
    c = Out(M, N, dtype=pl.FP32)

    def build(self, cores):
        col_major = cores.b_col_maj

        @pl.jit.incore
        def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
            c = pl.assemble(c, pl.matmul(a, b, b_trans=col_major), [0, 0])
            return c

        @pl.jit.incore
        def mm_bias(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
            row = pl.reshape(bias, [1, bias.shape[0]])
            c = pl.assemble(c, pl.col_expand_add(pl.matmul(a, b, b_trans=col_major), row), [0, 0])
            return c

        @pl.jit
        def linear(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
            c = mm(a, b, c)
            return c

        @pl.jit
        def linear_bias(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
            c = mm_bias(a, b, bias, c)
            return c

        return linear_bias if cores.has_bias else linear


def test_scale_runs_and_per_call_values_do_not_recompile():
    op = Scale(M=64, factor=2.0)
    x = torch.randn(64)
    first = op(x, out=torch.zeros(64), config=CONFIG, valid=64)
    torch.testing.assert_close(first, x * 2.0)
    before = COUNTERS["compiles"]
    for valid in (16, 32, 48):
        y = op(x, out=torch.zeros(64), config=CONFIG, valid=valid)
        torch.testing.assert_close(y, op.reference(x, valid))
    assert COUNTERS["compiles"] == before


def test_a_profiled_call_runs_the_orchestration(tmp_path, capsys):
    """An operator call takes the direct launch unless its config asks for a profile (or
    dumps): then it runs the program's orchestration, which writes the swimlane trace."""
    op, x = RowSoftmax(M=64, N=64), torch.randn(64, 64)
    torch.testing.assert_close(op(x, config=CONFIG), torch.softmax(x, -1))
    assert next(iter(op._plans.values())).program.direct_launch is not None
    config = RunConfig(device=DEV, profiling=True, profile_dir=str(tmp_path))
    torch.testing.assert_close(op(x, config=config), torch.softmax(x, -1))
    assert list(tmp_path.iterdir()), "no profile written"


def test_per_call_value_checks():
    op = Scale(M=64)
    x = torch.randn(64)
    with pytest.raises(ValueError, match="Scale: valid=65 exceeds M=64"):
        op(x, config=CONFIG, valid=65)
    with pytest.raises(TypeError, match=r"needs the per-call value valid="):
        op(x, config=CONFIG)
    with pytest.raises(TypeError, match=r"takes no per-call value \['bogus'\]"):
        op(x, config=CONFIG, valid=1, bogus=2)


def test_builds_are_shared_by_array_key():
    a = Scale(M=64, factor=2.0).resolved(DEV)
    b = Scale(M=128, factor=2.0).resolved(DEV)
    assert a.array_key() == b.array_key() and a.jit() is b.jit()
    assert Scale(M=64, factor=2.0, tile=8).resolved(DEV).jit() is not a.jit()
    assert Scale(M=64, factor=3.0).resolved(DEV).jit() is not a.jit()
    with pytest.raises(TypeError, match="is not resolved"):
        Scale(M=64).jit()


def test_a_build_reading_outside_the_key_fails_loudly():
    class Leaky(Scale):
        def build(self, cores):
            return cores.M

    with pytest.raises(AttributeError, match=r"Leaky.M is not part of the cores' layout"):
        Leaky(M=64)(torch.randn(64), config=CONFIG, valid=8)


def test_wrong_inputs_fail_before_compiling():
    op = Scale(M=64)
    before = COUNTERS["compiles"]
    with pytest.raises(ValueError, match=r"Scale: M is 32 from x.shape\[0\] but 64 from given"):
        op(torch.randn(32), config=CONFIG, valid=8)
    with pytest.raises(TypeError, match=r"Scale takes 1 operand\(s\) \(x\), got 2"):
        op(torch.randn(64), torch.randn(64), config=CONFIG, valid=8)
    with pytest.raises(TypeError, match="operand x is FP32, got a torch.float64 tensor"):
        op(torch.randn(64, dtype=torch.float64), config=CONFIG, valid=8)
    assert COUNTERS["compiles"] == before


def test_a_repeated_call_still_checks_its_tensors():
    """The second call of a shape reuses the first one's plan (no resolve, no shape
    inference, no compile), yet every call checks its own tensors and outputs."""
    op = Scale(M=64, factor=3.0)
    x = torch.randn(64)
    torch.testing.assert_close(op(x, config=CONFIG, valid=64), x * 3.0)
    before = COUNTERS["compiles"]
    out = torch.zeros(64)
    assert op(x, out=out, config=CONFIG, valid=64) is out
    torch.testing.assert_close(out, x * 3.0)
    with pytest.raises(ValueError, match="operand x must be a contiguous CPU tensor"):
        op(torch.randn(128)[::2], config=CONFIG, valid=64)
    with pytest.raises(ValueError, match="operand y must be a contiguous CPU tensor"):
        op(x, out=torch.zeros(128)[::2], config=CONFIG, valid=64)
    with pytest.raises(TypeError, match="operand y takes a torch tensor, got list"):
        op(x, out=[[0.0] * 64], config=CONFIG, valid=64)
    with pytest.raises(ValueError, match="Scale: valid=65 exceeds M=64"):
        op(x, config=CONFIG, valid=65)
    y = op(torch.ones(64), out=torch.zeros(64), config=CONFIG, valid=32)
    torch.testing.assert_close(y, torch.cat([torch.full((32,), 3.0), torch.zeros(32)]))
    assert COUNTERS["compiles"] == before


@pytest.mark.parametrize("col_major", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_select_and_optional_bias(col_major, bias):
    a, b, c = torch.randn(16, 32), torch.randn(32, 24), torch.randn(24)
    given = (a, b.T.contiguous() if col_major else b) + ((c,) if bias else ())
    got = Linear.call(*given, b_col_maj=col_major, config=CONFIG)
    torch.testing.assert_close(got, a @ b + (c if bias else 0), rtol=1e-4, atol=1e-4)


def test_linear_infers_its_flags():
    a, b, c = torch.randn(16, 32), torch.randn(32, 24), torch.randn(24)
    op = Linear(M=16, N=24, K=32, has_bias=True)
    torch.testing.assert_close(op(a, b, c, config=CONFIG), a @ b + c, rtol=1e-4, atol=1e-4)
    with pytest.raises(TypeError, match=r"Linear\(has_bias=True\) takes bias="):
        op(a, b, config=CONFIG)


def test_current_device_is_the_run_device():
    op = Scale(M=64)
    with set_current_device(DEV):
        y = op(torch.ones(64), valid=64)
    torch.testing.assert_close(y, torch.ones(64))


def test_reference_only_and_unresolvable():
    class Sketch(JitOperator):
        M: int = param()
        x = In(M, dtype=pl.FP32)
        y = Out(M, dtype=pl.FP32)

        def reference(self, x):
            return x

    assert Sketch.reference_only and not Scale.reference_only
    with pytest.raises(TypeError, match="has a reference and no kernel yet"):
        Sketch(M=4)(torch.ones(4), config=CONFIG)

    class Hopeless(Scale):
        def resolve(self, dev):
            raise Unresolvable(f"no tile fits {dev.name}")

    with pytest.raises(Unresolvable, match="no tile fits cpu-2x1c2v"):
        Hopeless(M=64)(torch.ones(64), config=CONFIG, valid=1)
