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


def test_unknown_keyword_and_runtime_marker_with_samples():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        annotated(torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32), 1, bogus=3)
    with pytest.raises(TypeError, match="pl.RUNTIME for scalar 'n' is only accepted when compiling from"):
        annotated.compile(torch.zeros(4, 64), torch.zeros(64, 32), torch.zeros(4, 32), pl.RUNTIME)


def test_incore_functions_are_not_called_directly():
    with pytest.raises(TypeError, match="can only be called from a @pl.jit entry"):
        kernel(torch.zeros(2), torch.zeros(2))
    with pytest.raises(TypeError, match="does not take auto_scope="):
        pl.jit.incore(auto_scope=False)


def test_specialize_rejects_config():
    with pytest.raises(TypeError, match="specialize\\(\\) takes no config="):
        annotated.specialize(config=None)
