"""`@pl.jit` scalar parameters annotated with a bare dtype (`scale: pl.FP32`), the
reference's spelling of `pl.Scalar[pl.FP32]`: specialized on their value."""

from __future__ import annotations

import torch

import plang as pl


@pl.jit
def scaled_prefix(data: pl.Tensor, scale: pl.FP32, vlen: pl.INDEX, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(data, [0, 0], [16, 64], valid_shape=[16, vlen])
        padded = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        pl.store(pl.mul(padded, scale), [0, 0], out)
    return out


def test_dtype_annotated_scalars_specialize():
    x = torch.randn(16, 64)
    for scale, vlen in ((2.0, 64), (0.5, 40)):
        out = torch.zeros(16, 64)
        scaled_prefix(x, scale, vlen, out)
        want = torch.zeros(16, 64)
        want[:, :vlen] = x[:, :vlen] * scale
        torch.testing.assert_close(out, want)
