"""@pl.jit argument checking: wrong rank, shape, dtype or arity raises TypeError naming the
parameter, before anything is compiled."""

import pytest
import torch

import plang as pl

M = pl.dynamic("M")


@pl.jit
def annotated(x: pl.Tensor[[M, 64], pl.FP32], w: pl.Tensor[[64, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[M, 32], pl.FP32]], n: pl.Scalar[pl.INT32]):
    return out


@pl.jit.incore
def kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    return c


def test_param_names_and_outputs():
    assert annotated.param_names == ["x", "w", "out", "n"]
    assert annotated.output_param_names == ["out"]


@pytest.mark.parametrize("args,match", [
    ((torch.zeros(4, 64), torch.zeros(64, 32, dtype=torch.float16), torch.zeros(4, 32), 1),
     r"parameter 'w' expects dtype FP32, got FP16"),
    ((torch.zeros(4, 64), torch.zeros(64, 16), torch.zeros(4, 32), 1),
     r"parameter 'w' expects shape \[64, 32\], got \[64, 16\]"),
    ((torch.zeros(4, 64, 1), torch.zeros(64, 32), torch.zeros(4, 32), 1),
     r"parameter 'x' expects rank 2"),
    ((torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(5, 32), 1),
     r"dynamic dim M is 4 elsewhere but parameter 'out' has 5"),
    ((torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32)),
     r"missing argument 'n'"),
    ((torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32), 1, 2),
     r"takes 4 arguments \(x, w, out, n\), got 5"),
    ((torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32), 1.5),
     r"parameter 'n' is pl.Scalar\[pl.INT32\] and needs an int"),
    ((torch.zeros(4, 64), [1, 2], torch.zeros(4, 32), 1),
     r"parameter 'w' expects pl.Tensor\[\[64, 32\], pl.FP32\], got list"),
])
def test_bad_arguments_name_the_parameter(args, match):
    with pytest.raises(TypeError, match=match):
        annotated(*args)


def test_unknown_keyword_and_runtime_marker_in_a_call():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        annotated(torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32), 1, bogus=3)
    with pytest.raises(TypeError, match="pl.RUNTIME for scalar 'n' is accepted by compile"):
        annotated(torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32), pl.RUNTIME)


@pl.jit.incore
def shift_tile(x: pl.Tensor, y: pl.Out[pl.Tensor], k: pl.Scalar[pl.FP32]):
    t = pl.load(x, [0], [16])
    y = pl.store(pl.add(t, k), [0], y)
    return y


@pl.jit
def shifted(x: pl.Tensor, y: pl.Out[pl.Tensor], k: pl.Scalar[pl.FP32]):
    y = shift_tile(x, y, k)
    return y


def test_runtime_scalar_with_sample_tensors_is_one_compile_for_every_value():
    from plang.jit.compiler import COUNTERS

    x = torch.arange(16, dtype=torch.float32)
    compiled = shifted.compile(x, torch.zeros(16), pl.RUNTIME)
    assert [p.name for p in compiled.signature] == ["x", "y", "k"]
    before = COUNTERS["compiles"]
    assert shifted.compile(x, torch.zeros(16), k=pl.RUNTIME) is compiled
    for k in (2.0, 3.0, 5.0):
        y = torch.zeros(16)
        compiled(x, y, k)
        torch.testing.assert_close(y, x + k)
    assert COUNTERS["compiles"] == before


def test_incore_functions_are_not_called_directly():
    with pytest.raises(TypeError, match="can only be called from a @pl.jit entry"):
        kernel(torch.zeros(2), torch.zeros(2))
    with pytest.raises(TypeError, match="does not take auto_scope="):
        pl.jit.incore(auto_scope=False)


def test_specialize_rejects_config():
    with pytest.raises(TypeError, match="specialize\\(\\) takes no config="):
        annotated.specialize(config=None)
