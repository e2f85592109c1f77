"""`tensor.read` / `tensor.write` inside a kernel: one DDR element as a scalar, at one index per axis or a
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


@pytest.mark.parametrize("dtype", [FP32, INT32])
def test_tensor_write_sets_one_element_per_axis_or_flat(dtype):
    """table[pick[0], 1] = 7 and table.flat[9] (= table[1, 4]) = -3, in place; the rest kept."""
    b = IRBuilder()
    with b.function("poke", type=FunctionType.InCore) as f:
        pick = f.param("pick", TensorType([2], INT32))
        table = f.param("table", TensorType([3, 5], dtype), ParamDirection.InOut)
        row = b.let("row", make_call("tensor.read", [pick, [0]]))
        t1 = b.let("t1", make_call("tensor.write", [table, [row, 1], 7]))
        b.eval(make_call("tensor.write", [t1, 9, -3]))
    td = dtype.to_torch()
    table = torch.arange(15, dtype=td).reshape(3, 5)
    want = table.clone()
    want[2, 1], want[1, 4] = 7, -3
    compile_kernel(f.function)(torch.tensor([2, 0], dtype=torch.int32), table)
    assert torch.equal(table, want)
