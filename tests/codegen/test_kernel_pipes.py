"""Cross-core pipe ops between an AIC and two AIV kernels running on threads, through the
runtime's ring buffers (`plang.runtime.pipes`), for each split mode."""

from __future__ import annotations

import threading

import pytest
import torch

from plang.codegen.kernel import compile_kernel
from plang.dtypes import FP32
from plang.ir import Add, Cast, ConstInt, FunctionType, Mul, ParamDirection, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call
from plang.runtime.pipes import PipeSet

R, C = 8, 32


def _aic(split: int):
    """Load x, push it to the vector lanes, pop their results back and store them."""
    b = IRBuilder()
    with b.function("cube", type=FunctionType.AIC) as f:
        x = f.param("x", TensorType([R, C], FP32))
        out = f.param("out", TensorType([R, C], FP32), ParamDirection.Out)
        t = b.let("t", make_call("tile.load", [x, [0, 0], [R, C]]))
        b.eval(make_call("tile.tpush_to_aiv", [t], {"split": split}))
        back = b.let("back", make_call("tile.tpop_from_aiv", [], {"shape": [R, C], "dtype": FP32,
                                                                  "split": split}))
        b.eval(make_call("tile.store", [back, [0, 0], out]))
        b.eval(make_call("tile.tfree_to_aiv", [back], {"split": split}))
    return compile_kernel(f.function)


def _aiv(split: int):
    """Pop this lane's part, add 100 * (lane + 1), push it back."""
    shape = {0: [R, C], 1: [R // 2, C], 2: [R, C // 2]}[split]
    b = IRBuilder()
    with b.function("vec", type=FunctionType.AIV) as f:
        t = b.let("t", make_call("tile.tpop_from_aic", [], {"shape": shape, "dtype": FP32, "split": split}))
        lane = b.let("lane", make_call("tile.get_subblock_idx", []))
        bump = Cast(Mul(Add(lane, ConstInt(1)), ConstInt(100)), FP32)
        r = b.let("r", make_call("tile.adds", [t, bump]))
        b.eval(make_call("tile.tfree_to_aic", [t], {"split": split}))
        b.eval(make_call("tile.tpush_to_aic", [r], {"split": split}))
    return compile_kernel(f.function)


@pytest.mark.parametrize("split", [0, 1, 2])
def test_round_trip_through_pipes(split: int) -> None:
    cube, vec = _aic(split), _aiv(split)
    x = torch.randn(R, C)
    out = torch.zeros(R, C)
    pipes = PipeSet(timeout=10.0)
    try:
        threads = [threading.Thread(target=vec, kwargs={"pipes": pipes, "subblock_idx": lane})
                   for lane in range(2)]
        for th in threads:
            th.start()
        cube(x, out, pipes=pipes)
        for th in threads:
            th.join()
        assert pipes.error() is None
    finally:
        pipes.close()
    want = x.clone()
    if split == 0:
        want += 100  # the cube keeps lane 0's copy
    elif split == 1:
        want[: R // 2] += 100
        want[R // 2:] += 200
    else:
        want[:, : C // 2] += 100
        want[:, C // 2:] += 200
    assert torch.equal(out, want)
