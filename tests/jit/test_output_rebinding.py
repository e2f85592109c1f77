"""An Out parameter's name bound again before its value is used is rejected (the reference's
codegen fails such a kernel); the normal ways of writing outputs still run."""

import pytest
import torch

import plang as pl
from plang.backend.pto_backend import PartialCodegenError


@pl.jit
def discards(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)
        result = pl.add(x, 1.0)
    return result


@pl.jit
def rebinds_once(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.add(x, 1.0)
    return result


@pl.jit
def assembles_twice(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.assemble(result, pl.mul(pl.slice(x, [32], [0]), 2.0), [0])
        result = pl.assemble(result, pl.add(pl.slice(x, [32], [32]), 1.0), [32])
    return result


def test_a_discarded_output_value_is_rejected_at_the_rebinding():
    x = torch.randn(64)
    with pytest.raises(PartialCodegenError, match="output parameter 'result' is bound again") as info:
        discards(x, torch.zeros(64))
    assert isinstance(info.value, pl.Error)
    src = discards.source
    assert info.value.span.begin_line == src.orig_line(src.fdef.body[0].body[1].lineno)


def test_the_usual_forms_still_run():
    x = torch.randn(64)
    r = torch.zeros(64)
    rebinds_once(x, r)
    torch.testing.assert_close(r, x + 1.0)
    r = torch.zeros(64)
    assembles_twice(x, r)
    torch.testing.assert_close(r, torch.cat([x[:32] * 2.0, x[32:] + 1.0]))
