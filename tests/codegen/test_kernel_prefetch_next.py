"""A load in a loop prefetches the tile its loop's next iteration reads
(`lower_memory._next_window`): the results are those of torch at every ISA level, on the
last iteration (no next tile) and on multi-row or rank-3 windows; big tiles and loads whose
offsets do not follow the loop prefetch nothing."""

from __future__ import annotations

import pytest
import torch

from plang.codegen.kernel import compile_kernel
from plang.codegen.kernel.lower_memory import NEXT_TILE_BYTES
from plang.dtypes import FP32
from plang.ir import Add, ConstInt, FunctionType, ParamDirection, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call
from plang.target import Device, runnable_levels

LEVELS = [pytest.param(level, id=level) for level in runnable_levels()]
OUT = ParamDirection.Out


def _row_kernel(shape: list[int], tile: list[int], step: int, op: str, level: str | None = None,
                offset_of=lambda i: i):
    """for i in range(0, shape[0], step): out[window at i] = op(x[window at i])."""
    b = IRBuilder()
    with b.function("rows", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType(shape, FP32))
        out = f.param("out", TensorType(shape, FP32), OUT)
        with b.for_range("i", 0, shape[0], step) as loop:
            at = [offset_of(loop.var)] + [0] * (len(shape) - 1)
            t = b.let("t", make_call("tile.load", [x, at, tile]))
            if op == "softmax":
                tmp = b.let("tmp", make_call("tile.create", [tile], {"dtype": FP32}))
                mx = b.let("mx", make_call("tile.row_max", [t, tmp]))
                e = b.let("e", make_call("tile.row_expand_expdif", [t, mx]))
                s = b.let("s", make_call("tile.row_sum", [e, tmp]))
                r = b.let("r", make_call("tile.row_expand_div", [e, s]))
            else:
                r = b.let("r", make_call(op, [t]))
            b.eval(make_call("tile.store", [r, at, out]))
    return compile_kernel(f.function, device=Device(isa=level) if level else None)


@pytest.mark.parametrize("level", LEVELS)
def test_row_softmax_prefetching_the_next_row(level: str) -> None:
    kern = _row_kernel([37, 300], [1, 300], 1, "softmax", level)
    assert "memref.prefetch" in kern.mlir_text
    x = torch.randn(37, 300)
    out = torch.zeros_like(x)
    kern(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("level", LEVELS)
def test_multi_row_and_rank3_windows(level: str) -> None:
    kern = _row_kernel([9, 70], [3, 70], 3, "tile.exp", level)
    x = torch.randn(9, 70)
    out = torch.zeros_like(x)
    kern(x, out)
    torch.testing.assert_close(out, torch.exp(x), rtol=1e-6, atol=0)
    kern = _row_kernel([6, 3, 40], [1, 3, 40], 2, "tile.neg", level, offset_of=lambda i: Add(i, ConstInt(1)))
    x = torch.randn(6, 3, 40)
    out = torch.zeros_like(x)
    kern(x, out)
    assert "memref.prefetch" in kern.mlir_text
    assert torch.equal(out[1::2], -x[1::2]) and not out[0::2].any()


def test_big_tiles_and_fixed_offsets_prefetch_nothing() -> None:
    rows = NEXT_TILE_BYTES // (4 * 128) * 2
    assert "memref.prefetch" not in _row_kernel([2 * rows, 128], [rows, 128], rows, "tile.exp").mlir_text
    fixed = _row_kernel([8, 128], [1, 128], 1, "tile.exp", offset_of=lambda i: 0)
    assert "memref.prefetch" not in fixed.mlir_text
