"""Loads / stores (offsets, valid shapes, tensor-edge clipping, strided torch views, rank 1),
control flow (for with scalar and tile iter args, if with results, while), block indices
and scalar parameters, through the MLIR path; all exact."""

from __future__ import annotations

import pytest
import torch
from _kernel_util import edge_valid

from plang.codegen.kernel import LaunchContext, compile_kernel
from plang.dtypes import FP32, INDEX, INT32
from plang.ir import Add, ConstInt, FunctionType, Lt, ParamDirection, ScalarType, TensorType, TileType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call

OUT = ParamDirection.Out


def _copy_kernel(rows: int, cols: int, tr: int, tc: int, rank: int = 2):
    """out = x, tiled over a 2D (or 1D) grid; edge tiles declare the part inside the tensor
    as their valid shape (`edge_valid`)."""
    b = IRBuilder()
    shape = [rows, cols] if rank == 2 else [cols]
    with b.function("copy", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType(shape, FP32))
        out = f.param("out", TensorType(shape, FP32), OUT)
        with b.for_range("i", 0, rows, tr) as li:
            with b.for_range("j", 0, cols, tc) as lj:
                off = [li.var, lj.var] if rank == 2 else [lj.var]
                shp = [tr, tc] if rank == 2 else [tc]
                valid = edge_valid(off, shp, shape)
                t = b.let("t", make_call("tile.load", [x, off, shp], {"valid_shape": valid}))
                b.eval(make_call("tile.store", [t, off, out]))
    return compile_kernel(f.function)


def test_edge_tiles_are_clipped() -> None:
    k = _copy_kernel(37, 150, 8, 64)
    x = torch.randn(37, 150)
    out = torch.zeros(37, 150)
    k(x, out)
    assert torch.equal(out, x)


def test_strided_views_zero_copy() -> None:
    k = _copy_kernel(10, 40, 4, 16)
    base = torch.randn(30, 100)
    x = base[5:25:2, 7:47]  # row stride 200, storage offset
    out_base = torch.zeros(12, 60)
    out = out_base[1:11, 10:50]
    k(x, out)
    assert torch.equal(out, x)
    assert out_base[0].abs().sum() == 0 and out_base[:, :10].abs().sum() == 0


def test_rank1_tensor() -> None:
    k = _copy_kernel(1, 100, 1, 32, rank=1)
    x = torch.randn(100)
    out = torch.zeros(100)
    k(x, out)
    assert torch.equal(out, x)


def test_non_unit_inner_stride_is_rejected() -> None:
    k = _copy_kernel(8, 8, 8, 8)
    x = torch.randn(8, 16)[:, ::2]
    with pytest.raises(TypeError, match="innermost stride"):
        k(x, torch.zeros(8, 8))


def test_valid_shape_limits_load_and_store() -> None:
    b = IRBuilder()
    with b.function("partial", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([16, 64], FP32))
        n = f.param("n", ScalarType(INDEX))
        out = f.param("out", TensorType([16, 64], FP32), OUT)
        t = b.let("t", make_call("tile.load", [x, [0, 0], [16, 64]], {"valid_shape": [5, n]}))
        r = b.let("r", make_call("tile.adds", [t, 1.0]))
        b.eval(make_call("tile.store", [r, [0, 0], out]))
    k = compile_kernel(f.function)
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    k(x, 13, out)
    want = torch.zeros(16, 64)
    want[:5, :13] = x[:5, :13] + 1
    assert torch.equal(out, want)


def test_loop_carried_tile_and_scalar() -> None:
    """acc = sum over column blocks of x (tile iter arg), plus a counted scalar."""
    b = IRBuilder()
    with b.function("colsum", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([4, 128], FP32))
        out = f.param("out", TensorType([4, 32], FP32), OUT)
        z = b.let("z", make_call("tile.full", [[4, 32]], {"dtype": FP32, "value": 0.0}))
        with b.for_range("j", 0, 128, 32, iter_args=[("acc", z), ("cnt", ConstInt(0, INDEX))]) as lj:
            t = b.let("t", make_call("tile.load", [x, [0, lj.var], [4, 32]]))
            acc = b.let("acc2", make_call("tile.add", [lj.iter_args[0], t]))
            b.yield_(acc, Add(lj.iter_args[1], ConstInt(1, INDEX)))
        scaled = b.let("s", make_call("tile.muls", [lj.return_vars[0], 1.0]))
        b.eval(make_call("tile.store", [scaled, [0, 0], out]))
    k = compile_kernel(f.function)
    x = torch.randn(4, 128)
    out = torch.zeros(4, 32)
    k(x, out)
    torch.testing.assert_close(out, x.reshape(4, 4, 32).sum(1), rtol=1e-6, atol=1e-6)


def test_if_with_tile_result_and_block_index() -> None:
    b = IRBuilder()
    with b.function("branch", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([2, 16], FP32))
        out = f.param("out", TensorType([2, 16], FP32), OUT)
        blk = b.let("blk", make_call("tile.get_block_idx", []))
        t = b.let("t", make_call("tile.load", [x, [blk, 0], [1, 16]]))
        with b.if_(Lt(blk, ConstInt(1, INDEX)), returns=[("r", TileType([1, 16], FP32))]) as br:
            with br.then_():
                b.yield_(make_call("tile.neg", [t]))
            with br.else_():
                b.yield_(make_call("tile.muls", [t, 2.0]))
        b.eval(make_call("tile.store", [br.return_vars[0], [blk, 0], out]))
    k = compile_kernel(f.function)
    x = torch.randn(2, 16)
    out = torch.zeros(2, 16)
    for blk in range(2):
        k(x, out, ctx=LaunchContext(blk, 2, 0, 1, None, None))
    assert torch.equal(out[0], -x[0]) and torch.equal(out[1], 2 * x[1])
    out.zero_()
    k(x, out, block_idx=1, block_num=2)
    assert torch.equal(out[1], 2 * x[1]) and not out[0].any()


def test_while_loop() -> None:
    """Double a tile until a counter reaches n (a scalar parameter)."""
    b = IRBuilder()
    with b.function("dbl", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([1, 8], INT32))
        n = f.param("n", ScalarType(INDEX))
        out = f.param("out", TensorType([1, 8], INT32), OUT)
        t = b.let("t", make_call("tile.load", [x, [0, 0], [1, 8]]))
        with b.while_([("v", t), ("i", ConstInt(0, INDEX))]) as lw:
            lw.set_cond(Lt(lw.iter_args[1], n))
            b.yield_(make_call("tile.muls", [lw.iter_args[0], 2]), Add(lw.iter_args[1], ConstInt(1, INDEX)))
        b.eval(make_call("tile.store", [lw.return_vars[0], [0, 0], out]))
    k = compile_kernel(f.function)
    x = torch.arange(8, dtype=torch.int32).reshape(1, 8)
    out = torch.zeros(1, 8, dtype=torch.int32)
    k(x, 5, out)
    assert torch.equal(out, x * 32)


def test_a_store_written_in_the_return_statement_runs():
    """`return pl.tile.store(..)` straight into compile_kernel (no FlattenCallExpr first): the
    store is still emitted."""
    from plang.codegen.kernel import compile_kernel as _compile
    from plang.language import parse as _parse

    fn = _parse("""
import plang as pl

@pl.function(type=pl.FunctionType.AIV)
def k(x: pl.Tensor[[8, 16], pl.FP32],
      out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
    t: pl.Tile[[8, 16], pl.FP32] = pl.tile.load(x, [0, 0], [8, 16])
    return pl.tile.store(pl.tile.adds(t, 1.0), [0, 0], out)
""")
    x, out = torch.randn(8, 16), torch.zeros(8, 16)
    _compile(fn)(x, out)
    torch.testing.assert_close(out, x + 1.0)
