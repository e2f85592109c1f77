"""The reference's older call spelling of annotations, `pl.Tensor((64, 64), pl.FP32)`,
`pl.Tile(...)`, `pl.Scalar(pl.FP32)`: the same types as the subscript forms, in
`@pl.function` signatures and bodies and in `@pl.jit` signatures."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.ir import assert_structural_equal


def test_a_call_is_the_subscript_annotation():
    t = pl.Tensor((64, 128), pl.FP16)
    assert (t.shape, t.dtype) == ((64, 128), pl.FP16)
    assert repr(t.type) == repr(pl.Tensor[[64, 128], pl.FP16].type)
    tile = pl.Tile((16, 16), pl.BF16, pl.Mem.Vec)
    assert repr(tile.type) == repr(pl.Tile[[16, 16], pl.BF16, pl.Mem.Vec].type)
    assert repr(pl.Scalar(pl.INT32).type) == repr(pl.Scalar[pl.INT32].type)
    with pytest.raises(pl.ParserTypeError, match=r"pl.Tensor\(...\) as an annotation takes positional items"):
        pl.Tensor((4,), pl.FP32, foo=1)


@pl.function(type=pl.FunctionType.InCore)
def legacy(x: pl.Tensor((64, 64), pl.FP32), s: pl.Scalar(pl.FP32),
           out: pl.Out[pl.Tensor((64, 64), pl.FP32)]) -> pl.Tensor((64, 64), pl.FP32):
    a: pl.Tile((64, 64), pl.FP32) = pl.load(x, [0, 0], [64, 64])
    out = pl.store(pl.mul(a, s), [0, 0], out)
    return out


@pl.function(type=pl.FunctionType.InCore)
def subscripted(x: pl.Tensor[[64, 64], pl.FP32], s: pl.Scalar[pl.FP32],
                out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
    a: pl.Tile[[64, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
    out = pl.store(pl.mul(a, s), [0, 0], out)
    return out


def test_a_function_with_call_annotations_is_the_subscripted_one():
    assert_structural_equal(legacy.replace(name="subscripted"), subscripted)


@pl.jit
def doubled(x: pl.Tensor((64, 64), pl.FP32), out: pl.Out[pl.Tensor((64, 64), pl.FP32)]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(x, 2.0)
    return out


def test_a_jit_signature_with_call_annotations_runs_and_checks_its_shapes():
    x, out = torch.randn(64, 64), torch.zeros(64, 64)
    doubled(x, out)
    torch.testing.assert_close(out, 2 * x)
    with pytest.raises(TypeError, match=r"parameter 'x' expects shape \[64, 64\], got \[32, 64\]"):
        doubled(torch.randn(32, 64), torch.zeros(32, 64))
