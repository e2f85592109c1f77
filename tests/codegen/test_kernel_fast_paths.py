"""Fast paths of the kernel backend against torch: DDR chunks that are whole take plain
vector transfers and partial ones masked transfers (both in one kernel, with rows and
columns clipped at run time), and the matmul family packs B straight from a deferred
`tile.load` (clipped, so packing must see the zero fill) or from a tile buffer (B used
twice), for every operand dtype.

Tolerances as in test_kernel_matmul.py: FP32 rtol/atol 1e-4; half floats are exact in FP32;
INT8 exact.
"""

from __future__ import annotations

import pytest
import torch
from _kernel_util import edge_valid

from plang.codegen.kernel import compile_kernel
from plang.dtypes import FP32, INDEX, INT32, DataType
from plang.ir import FunctionType, ParamDirection, ScalarType, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call


def _clipped_add_kernel(rows: int, cols: int, m: int, n: int):
    b = IRBuilder()
    with b.function("clipped_add", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        y = f.param("y", TensorType([m, n], FP32))
        r0 = f.param("r0", ScalarType(INDEX))
        c0 = f.param("c0", ScalarType(INDEX))
        out = f.param("out", TensorType([m, n], FP32), ParamDirection.Out)
        valid = {"valid_shape": edge_valid([r0, c0], [rows, cols], [m, n])}
        xt = b.let("xt", make_call("tile.load", [x, [r0, c0], [rows, cols]], valid))
        yt = b.let("yt", make_call("tile.load", [y, [r0, c0], [rows, cols]], valid))
        s = b.let("s", make_call("tile.add", [xt, yt]))
        b.eval(make_call("tile.store", [s, [r0, c0], out]))
    return compile_kernel(f.function)


@pytest.mark.parametrize("cols", [150, 127, 128])
@pytest.mark.parametrize("r0, c0", [(0, 0), (3, 0), (0, 40), (5, 77), (9, 0), (0, 73)])
def test_whole_and_partial_chunks(cols: int, r0: int, c0: int) -> None:
    """A [6, cols] tile (chunks of 64; the last one partial unless cols = 128, one lane
    short for 127) over a [12, 200] tensor at run-time offsets: whole chunks, partial
    chunks, clipped rows and columns (c0 = 73 leaves exactly 127 columns)."""
    m, n = 12, 200
    kern = _clipped_add_kernel(6, cols, m, n)
    x, y = torch.randn(m, n), torch.randn(m, n)
    out = torch.full((m, n), 7.0)
    kern(x, y, r0, c0, out)
    want = torch.full((m, n), 7.0)
    r1, c1 = min(m, r0 + 6), min(n, c0 + cols)
    want[r0:r1, c0:c1] = x[r0:r1, c0:c1] + y[r0:r1, c0:c1]
    assert torch.equal(out, want)


def _matmul_kernel(d: DataType, m: int, n: int, k: int, b_rows: int, b_twice: bool):
    """out = A @ B_tile where B_tile loads [k, n] from a [b_rows, n] tensor at row `off`
    (rows past the tensor are zero); with `b_twice`, out = A @ B_tile + A @ B_tile (B then
    lives in a tile buffer)."""
    acc_d = INT32 if d.name == "INT8" else FP32
    b = IRBuilder()
    with b.function("mm", type=FunctionType.AIC) as f:
        a = f.param("a", TensorType([m, k], d))
        bb = f.param("b", TensorType([b_rows, n], d))
        off = f.param("off", ScalarType(INDEX))
        out = f.param("out", TensorType([m, n], acc_d), ParamDirection.Out)
        at = b.let("at", make_call("tile.load", [a, [0, 0], [m, k]]))
        bt = b.let("bt", make_call("tile.load", [bb, [off, 0], [k, n]], {"clamp": True}))
        r = b.let("r", make_call("tile.matmul", [at, bt]))
        if b_twice:
            r = b.let("r2", make_call("tile.matmul_acc", [r, at, bt]))
        b.eval(make_call("tile.store", [r, [0, 0], out]))
    return compile_kernel(f.function)


@pytest.mark.parametrize("dtype", ["FP32", "BF16", "FP16", "INT8"])
@pytest.mark.parametrize("b_twice", [False, True])
@pytest.mark.parametrize("shape", [(7, 80, 32), (13, 128, 64), (2, 16, 10)])
def test_matmul_packs_clipped_b(dtype: str, b_twice: bool, shape: tuple[int, int, int]) -> None:
    d = DataType.from_name(dtype)
    m, n, k = shape
    b_rows, off = k + 5, 11  # the tile's rows past b_rows - off are outside the tensor
    kern = _matmul_kernel(d, m, n, k, b_rows, b_twice)
    if dtype == "INT8":
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8)
        bm = torch.randint(-128, 128, (b_rows, n), dtype=torch.int8)
        out = torch.zeros(m, n, dtype=torch.int32)
    else:
        a, bm = torch.randn(m, k).to(d.to_torch()), torch.randn(b_rows, n).to(d.to_torch())
        out = torch.zeros(m, n)
    kern(a, bm, off, out)
    b_tile = torch.zeros(k, n, dtype=torch.float64)
    b_tile[: b_rows - off] = bm[off:].double()
    want = (a.double() @ b_tile) * (2 if b_twice else 1)
    if dtype == "INT8":
        assert torch.equal(out, want.to(torch.int32))
    else:
        torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)
