"""@iron.jit: CompileTime builds, DispatchTime per call without a build, shapes, prebinding,
decoration-time checks; tensor factories and dtype names."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import plang.iron as iron
from plang.iron import CompileTime, DispatchTime, In, ObjectFifo, Out, Program, Runtime, Worker

SCALE = r"""
#include <stdint.h>
extern "C" void scale(const int32_t *in, int32_t *out, int32_t k, int32_t n) {
    for (int32_t i = 0; i < n; ++i) out[i] = in[i] * k;
}
"""


@iron.jit
def scaled(a: In, c: Out, *, tile: CompileTime[int] = 128, k: DispatchTime[np.int32] = 1):
    """c[:k * tile] = 3 * a[:k * tile]: the sequence moves `k` tiles (a per-call count)."""
    n = a.shape[0]
    ty = np.ndarray[(tile,), np.dtype[np.int32]]
    kern = iron.ExternalFunction("scale", source_string=SCALE, arg_types=[ty, ty, np.int32, np.int32])
    of_in, of_out = ObjectFifo(ty, name="in"), ObjectFifo(ty, name="out")

    def core(src, dst, kernel):
        x, y = src.acquire(1), dst.acquire(1)
        kernel(x, y, 3, tile)
        src.release(1)
        dst.release(1)

    w = Worker(core, [of_in.cons(), of_out.prod(), kern])  # while_true: one tile per iteration
    tiles = [iron.TensorAccessPattern((n,), i, [tile], [1]) for i in range(0, n, tile)]

    def sequence(x, y, count, i, o):
        for step in iron.range_(count):
            i.fill(x, tap=tiles[step])
            o.drain(y, tap=tiles[step], wait=True)

    rt = Runtime(sequence, [a, c, k, of_in.prod(), of_out.cons()])
    return Program(iron.get_current_device(), rt, [w])


def test_compile_time_rebuilds_dispatch_time_does_not():
    a = torch.arange(1024, dtype=torch.int32)
    before = iron.COUNTERS["builds"]
    for k in (1, 3, 8):
        c = torch.zeros_like(a)
        scaled(a, c, k=k)
        assert torch.equal(c[:k * 128], a[:k * 128] * 3) and not c[k * 128:].any()
    assert iron.COUNTERS["builds"] == before + 1
    c = torch.zeros_like(a)
    scaled(a, c, k=2, tile=256)  # a CompileTime change: one more build
    assert iron.COUNTERS["builds"] == before + 2 and torch.equal(c[:512], a[:512] * 3)
    scaled(torch.arange(2048, dtype=torch.int32), torch.zeros(2048, dtype=torch.int32), k=1)
    assert iron.COUNTERS["builds"] == before + 3  # a new shape


def test_prebinding_and_specialize():
    a = torch.arange(512, dtype=torch.int32)
    c = torch.zeros_like(a)
    pre = iron.jit(scaled.generator, tile=64)
    pre(a, c, k=8)
    assert torch.equal(c, a * 3)
    spec = scaled.specialize(tile=256)
    assert spec.prebound == {"tile": 256}
    with pytest.raises(TypeError, match="has no parameter \\['bogus'\\]"):
        iron.jit(scaled.generator, bogus=1)


def test_per_call_values_must_be_integers():
    a = torch.arange(256, dtype=torch.int32)
    with pytest.raises(TypeError, match="a per-call value is an integer"):
        scaled(a, torch.zeros_like(a), k=1.5)
    with pytest.raises(TypeError, match="declares no ScratchpadParameter"):
        scaled(a, torch.zeros_like(a), parameters={"x": 1})


def test_decoration_time_checks():
    with pytest.raises(TypeError, match="parameter 'tile' has a default but no marker"):
        @iron.jit
        def bad(a: In, tile=16):
            pass

    with pytest.raises(TypeError, match="DispatchTime parameter 'n' must be keyword-only"):
        @iron.jit
        def bad2(a: In, n: DispatchTime[np.int32]):
            pass

    with pytest.raises(TypeError, match="T must be a NumPy integer"):
        DispatchTime[float]


def test_generator_must_return_a_program():
    @iron.jit
    def nothing(a: In):
        return 3

    with pytest.raises(TypeError, match="must return a Program"):
        nothing(torch.zeros(4))


def test_compileconfig_and_get_compile_arg():
    seen = []

    @iron.jit
    @iron.compileconfig(tile=32)
    def gen(a: In, c: Out, *, tile: CompileTime[int] = 8, k: DispatchTime[np.int32] = 1):
        seen.append(iron.get_compile_arg("tile"))
        return scaled.generator(a, c, tile=tile, k=k)

    a = torch.arange(64, dtype=torch.int32)
    c = torch.zeros_like(a)
    gen(a, c, k=2)
    assert seen == [32] and torch.equal(c, a * 3)


def test_tensor_factories_return_torch_cpu_tensors():
    z = iron.zeros((4,), dtype=np.int32)
    assert isinstance(z, torch.Tensor) and z.dtype == torch.int32 and z.device.type == "cpu"
    assert z.tolist() == [0] * 4
    assert iron.arange(5).dtype == torch.int64 and iron.arange(5).tolist() == list(range(5))
    r = iron.rand(1000)
    assert r.dtype == torch.float32 and 0 <= r.min() and r.max() < 1
    assert iron.ones((2, 2), dtype=np.float32).sum().item() == 4
    assert iron.full((3,), 7, dtype=np.int16).tolist() == [7, 7, 7]
    assert iron.zeros_like(torch.ones(3, dtype=torch.int8)).dtype == torch.int8
    assert iron.tensor([1, 2, 3], dtype=np.int32).dtype == torch.int32
    ri = iron.randint(0, 5, (100,), dtype=np.int32)
    assert ri.dtype == torch.int32 and 0 <= ri.min() and ri.max() < 5
    with pytest.raises(ValueError, match="device must be 'npu' or 'cpu'"):
        iron.zeros((2,), device="gpu")


def test_dtype_names():
    assert iron.str_to_dtype("i32") is np.int32 and iron.dtype_to_str(np.int16) == "i16"
    assert iron.dtype_to_str(iron.str_to_dtype("bf16")) == "bf16"
    with pytest.raises(ValueError, match="Unrecognized dtype: x"):
        iron.str_to_dtype("x")
