"""B panels packed once per kernel call (`codegen.kernel.pack_cache`) vs torch in float64.

A GEMM loop nest that comes back to the same B tiles on every row strip keeps their packed
panels in a per-call buffer (taken from the runtime's per-thread scratch, given back at the
end of the call); the results must be those of packing every time: on and off the tile
grid, with a new B on every call into the same reused buffer, at every ISA level, without
scratch at all, and never for a tensor the kernel also writes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from plang.codegen.kernel import compile_kernel
from plang.codegen.kernel.abi import single_block_context
from plang.dtypes import BF16, FP16, FP32, INT8, INT32, DataType
from plang.ir import FunctionType, ParamDirection, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call
from plang.runtime import scratch
from plang.target import Device, runnable_levels

LEVELS = [pytest.param(level, id=level) for level in runnable_levels()]
OUT = ParamDirection.Out


def _gemm(d: DataType, m: int, n: int, k: int, tm: int, tn: int, tk: int, col_step: int | None = None,
          level: str | None = None, rows_outer: bool = True):
    """C = A @ B over (row strip, column strip, k step) loops, rows outermost by default;
    `col_step` below `tn` puts some B tiles off the tile grid."""
    acc = INT32 if d is INT8 else FP32
    b = IRBuilder()
    with b.function("gemm", type=FunctionType.InCore) as f:
        a = f.param("a", TensorType([m, k], d))
        bb = f.param("b", TensorType([k, n], d))
        c = f.param("c", TensorType([m, n], acc), OUT)
        outer = ("i", 0, m, tm) if rows_outer else ("j", 0, n - tn + 1, col_step or tn)
        inner = ("j", 0, n - tn + 1, col_step or tn) if rows_outer else ("i", 0, m, tm)
        with b.for_range(*outer) as lo, b.for_range(*inner) as li:
            i, j = (lo.var, li.var) if rows_outer else (li.var, lo.var)
            at = b.let("a0", make_call("tile.load", [a, [i, 0], [tm, tk]]))
            bt = b.let("b0", make_call("tile.load", [bb, [0, j], [tk, tn]]))
            acc0 = b.let("acc0", make_call("tile.matmul", [at, bt]))
            with b.for_range("kk", tk, k, tk, iter_args=[("acc", acc0)]) as lk:
                at = b.let("a1", make_call("tile.load", [a, [i, lk.var], [tm, tk]]))
                bt = b.let("b1", make_call("tile.load", [bb, [lk.var, j], [tk, tn]]))
                b.yield_(make_call("tile.matmul_acc", [lk.iter_args[0], at, bt]))
            b.eval(make_call("tile.store", [lk.return_vars[0], [i, j], c]))
    return compile_kernel(f.function, device=Device(isa=level) if level else None)


def _operands(d: DataType, m: int, n: int, k: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    if d is INT8:
        return (torch.randint(-8, 8, (m, k), generator=g, dtype=torch.int8),
                torch.randint(-8, 8, (k, n), generator=g, dtype=torch.int8))
    return (torch.randn(m, k, generator=g).to(d.to_torch()), torch.randn(k, n, generator=g).to(d.to_torch()))


def _check(kern, d: DataType, m: int, n: int, k: int, *seeds: int, ctx=None) -> int:
    """Calls with a new A and B per seed, all on one fresh thread; returns the bytes of
    scratch that thread keeps afterwards (the panel buffer the kernel gave back, or 0)."""

    def calls() -> int:
        for seed in seeds:
            x, y = _operands(d, m, n, k, seed)
            got = torch.zeros(m, n, dtype=torch.int32 if d is INT8 else torch.float32)
            kern(x, y, got, ctx=ctx)
            torch.testing.assert_close(got.double(), x.double() @ y.double(), rtol=1e-4, atol=1e-4)
        return scratch.kept_bytes()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(calls).result()


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("d", [FP32, BF16, FP16, INT8], ids=lambda d: d.name)
def test_row_strips_reuse_the_packed_b_tiles(d: DataType, level: str) -> None:
    m, n, k = 40, 128, 96
    kern = _gemm(d, m, n, k, 8, 64, 32, level=level)
    # a new B each call, packed into the buffer the first call gave back: nothing packed
    # survives the call; the panels hold all of B
    assert _check(kern, d, m, n, k, 0, 1) >= k * n * d.itemsize


def test_column_strips_outside_reuse_them_too() -> None:
    kern = _gemm(FP32, 48, 128, 64, 16, 64, 32, rows_outer=False)
    assert _check(kern, FP32, 48, 128, 64, 2) >= 128 * 64 * 4


def test_without_scratch_the_b_tiles_are_packed_per_use() -> None:
    """A launch context without the scratch functions: no panel buffer, the same results."""
    ctx = single_block_context()
    ctx.scratch_acquire = ctx.scratch_release = None
    kern = _gemm(FP32, 40, 128, 96, 8, 64, 32)
    assert _check(kern, FP32, 40, 128, 96, 5, 6, ctx=ctx) == 0


def test_the_panel_buffer_is_reused_by_the_next_call() -> None:
    """Two calls on one thread: the second takes the buffer the first gave back."""
    kern = _gemm(FP32, 40, 128, 96, 8, 64, 32)
    one = _check(kern, FP32, 40, 128, 96, 7)
    assert one > 0 and _check(kern, FP32, 40, 128, 96, 7, 8, 9) == one


def test_b_tiles_off_the_grid_are_packed_per_use() -> None:
    """Column strips 32 apart, 64 wide: every other strip starts off the 64-column grid and
    packs into the call's scratch buffer; a wrong slot would show in its columns."""
    m, n, k = 24, 128, 64
    kern = _gemm(FP32, m, n, k, 8, 64, 32, col_step=32)
    assert _check(kern, FP32, m, n, k, 3) > 0


def test_b_tiles_that_change_with_every_loop_are_packed_per_use() -> None:
    """One row strip: each B tile comes up once, and nothing is cached."""
    kern = _gemm(FP32, 8, 128, 64, 8, 64, 32)
    assert _check(kern, FP32, 8, 128, 64, 4) == 0


def test_a_tensor_the_kernel_writes_is_never_cached() -> None:
    """Each row strip's product is stored over B, which the next strip multiplies by:
    C_0 = A_0 @ B, C_1 = A_1 @ C_0."""
    s = 32
    b = IRBuilder()
    with b.function("chain", type=FunctionType.InCore) as f:
        a = f.param("a", TensorType([2 * s, s], FP32))
        bb = f.param("b", TensorType([s, s], FP32), ParamDirection.InOut)
        c = f.param("c", TensorType([2 * s, s], FP32), OUT)
        with b.for_range("i", 0, 2 * s, s) as li:
            at = b.let("at", make_call("tile.load", [a, [li.var, 0], [s, s]]))
            bt = b.let("bt", make_call("tile.load", [bb, [0, 0], [s, s]]))
            r = b.let("r", make_call("tile.matmul", [at, bt]))
            b.eval(make_call("tile.store", [r, [li.var, 0], c]))
            b.eval(make_call("tile.store", [r, [0, 0], bb]))
    kern = compile_kernel(f.function)
    assert "scratch" not in kern.mlir_text and "llvm.call" not in kern.mlir_text
    x, y = torch.randn(2 * s, s), torch.randn(s, s)
    got = torch.empty(2 * s, s)
    first = x[:s].double() @ y.double()
    kern(x, y, got)
    torch.testing.assert_close(got[:s].double(), first, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got[s:].double(), x[s:].double() @ first, rtol=1e-3, atol=1e-3)
