"""`pl.expand_clone(input, target)`: target overwritten with input broadcast to its shape, in
a kernel (a DDR-to-DDR copy) and in the torch reference."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref


@pl.jit.incore
def clone_into(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.expand_clone(x, y)
    return y


@pl.jit
def entry(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    return clone_into(x, y)


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 3, 5), (2, 1, 5), (2, 3, 1), (1, 1, 5)])
def test_expand_clone_broadcasts_like_torch(shape):
    x, y = torch.randn(shape), torch.zeros(2, 3, 5)
    entry(x, y)
    assert torch.equal(y, x.expand(2, 3, 5))
    ref = torch.zeros(2, 3, 5)
    run_torch_ref(entry.lower(x, ref), x, ref)
    assert torch.equal(ref, x.expand(2, 3, 5))


def test_a_dim_that_does_not_broadcast_is_an_error():
    with pytest.raises(pl.Error, match=r"does not broadcast to target \[2, 3, 5\] on axis 1"):
        entry(torch.randn(2, 2, 5), torch.zeros(2, 3, 5))
