"""`tensor.read` inside a kernel: one DDR element as a scalar, at one index per axis or a
flat row-major index, with dynamic indices; exact against torch indexing."""

from __future__ import annotations

import pytest
import torch

from plang.codegen.kernel import compile_kernel
from plang.dtypes import FP32, INT32
from plang.ir import FunctionType, ParamDirection, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call


def _scale_shift_kernel(dtype):
    """out = x * table[r, 3] + table.flat[12] (= table[2, 2]), r = pick[1] read at run time."""
    b = IRBuilder()
    with b.function("scale_shift", type=FunctionType.InCore) as f:
        table = f.param("table", TensorType([3, 5], dtype))
        pick = f.param("pick", TensorType([2], INT32))
        x = f.param("x", TensorType([4, 16], dtype))
        out = f.param("out", TensorType([4, 16], dtype), ParamDirection.Out)
        row = b.let("row", make_call("tensor.read", [pick, [1]]))
        scale = b.let("scale", make_call("tensor.read", [table, [row, 3]]))
        shift = b.let("shift", make_call("tensor.read", [table, 12]))
        t = b.let("t", make_call("tile.load", [x, [0, 0], [4, 16]]))
        r = b.let("r", make_call("tile.adds", [b.let("m", make_call("tile.muls", [t, scale])), shift]))
        b.eval(make_call("tile.store", [r, [0, 0], out]))
    return compile_kernel(f.function)


@pytest.mark.parametrize("dtype", [FP32, INT32])
def test_tensor_read_per_axis_and_flat_index(dtype):
    td = dtype.to_torch()
    table = torch.arange(15, dtype=td).reshape(3, 5) * 3 - 7
    pick = torch.tensor([0, 2], dtype=torch.int32)
    x = torch.randint(-9, 9, (4, 16)).to(td)
    out = torch.zeros(4, 16, dtype=td)
    _scale_shift_kernel(dtype)(table, pick, x, out)
    assert torch.equal(out, x * table[2, 3] + table[2, 2])
