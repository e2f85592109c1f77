"""An intermediate made by `pl.create_tensor` may take its dims from a parameter's shape
(`x.shape[i]`): the kernel it is passed to is specialized with those dims, per call shape."""

import pytest
import torch

import plang as pl

T = 32


@pl.jit.incore
def transpose_tiles(x: pl.Tensor, xt: pl.Out[pl.Tensor]):
    for i in pl.range(0, x.shape[0], T):
        for j in pl.range(0, x.shape[1], T):
            xt = pl.store(pl.transpose(pl.load(x, [i, j], [T, T]), 0, 1), [j, i], xt)
    return xt


@pl.jit.incore
def scale_tiles(xt: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(0, xt.shape[0], T):
        for j in pl.range(0, xt.shape[1], T):
            t = pl.load(xt, [i, j], [T, T])
            y = pl.store(pl.add(t, t), [i, j], y)
    return y


@pl.jit
def doubled_transpose(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    xt = pl.create_tensor([x.shape[1], x.shape[0]], dtype=pl.FP32)
    xt = transpose_tiles(x, xt)
    y = scale_tiles(xt, y)
    return y


@pytest.mark.parametrize("rows, cols", [(64, 96), (128, 32)])
def test_an_intermediate_shaped_by_a_parameter(rows, cols):
    x = torch.randn(rows, cols)
    y = torch.full((cols, rows), float("nan"))
    doubled_transpose(x, y)
    torch.testing.assert_close(y, 2 * x.T)


@pl.jit
def computed_dims(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    xt = pl.create_tensor([x.shape[1] * 1, x.shape[0]], dtype=pl.FP32)
    xt = transpose_tiles(x, xt)
    y = scale_tiles(xt, y)
    return y


def test_a_dim_computed_from_a_shape_is_still_a_located_error():
    with pytest.raises(pl.errors.JitSignatureError, match="cannot infer the shape of parameter 'xt'"):
        computed_dims(torch.randn(64, 64), torch.empty(64, 64))
