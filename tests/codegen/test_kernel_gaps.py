"""Kernel codegen beyond 2-D tiles of 2-D tensors: DDR tensors of rank 3 and 4 (2-D windows
over the last two dims at leading-dim offsets, N-D windows folding into tile rows, edge
clipping, strided views), `tensor.dim` inside a kernel, atomic-add stores (also from
concurrent SPMD blocks), and tensor matmuls with transposed operands. All exact unless stated."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
import torch
from _kernel_util import edge_valid

import plang as pl
from plang.codegen.kernel import KernelCompileError, compile_kernel
from plang.debug import run_torch_ref
from plang.dtypes import BF16, FP16, FP32, INDEX, INT8, INT16, INT32
from plang.ir import FunctionType, ParamDirection, ScalarType, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.enums import AtomicType
from plang.ir.ops import make_call
from plang.runtime import RunConfig

OUT, INOUT = ParamDirection.Out, ParamDirection.InOut


def _tiled_exp_kernel(shape: list[int], tile_rows: int, tile_cols: int):
    """out = exp(x) over a rank-n tensor: loops over every leading dim and 2-D tiles of the
    last two dims (edge tiles clipped by the tensor bounds)."""
    b = IRBuilder()
    with b.function("tiled_exp", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType(shape, FP32))
        out = f.param("out", TensorType(shape, FP32), OUT)
        with ExitStack() as loops:
            ranges = [(f"i{k}", n, 1) for k, n in enumerate(shape[:-2])]
            ranges += [("r", shape[-2], tile_rows), ("c", shape[-1], tile_cols)]
            offsets = [loops.enter_context(b.for_range(name, 0, n, step)).var for name, n, step in ranges]
            window = [1] * (len(shape) - 2) + [tile_rows, tile_cols]
            t = b.let("t", make_call("tile.load", [x, offsets, window],
                                     {"valid_shape": edge_valid(offsets, window, shape)}))
            b.eval(make_call("tile.store", [b.let("e", make_call("tile.exp", [t])), offsets, out]))
    return compile_kernel(f.function)


@pytest.mark.parametrize("shape", [[3, 20, 100], [2, 3, 13, 70]])
def test_two_d_tiles_over_the_last_dims_of_rank_3_and_4_tensors(shape):
    k = _tiled_exp_kernel(shape, 8, 64)
    x = torch.randn(*shape)
    out = torch.zeros(*shape)
    k(x, out)
    torch.testing.assert_close(out, torch.exp(x), rtol=1e-6, atol=0)


def test_rank_3_strided_views_and_inner_stride_check():
    k = _tiled_exp_kernel([3, 20, 100], 8, 64)
    base = torch.randn(24, 10, 120)
    x = base.permute(1, 0, 2)[5:8, 1:21, 10:110]  # leading strides permuted, storage offset
    out_base = torch.zeros(3, 24, 100)
    out = out_base[:, 2:22]
    k(x, out)
    torch.testing.assert_close(out, torch.exp(x), rtol=1e-6, atol=0)
    assert out_base[:, :2].abs().sum() == 0 and out_base[:, 22:].abs().sum() == 0
    with pytest.raises(TypeError, match="innermost stride"):
        k(torch.randn(3, 20, 200)[:, :, ::2], out_base[:, :20])


def test_n_d_window_folds_into_rows_and_clips_every_dim():
    # a clamped [2, 8, 64] load at dynamic offsets (o0, o1, 0) of a [3, 10, 70] tensor: rows
    # whose dim-0 or dim-1 index falls outside read as zero (stores of such a window raise:
    # tests/codegen/test_kernel_bounds.py)
    b = IRBuilder()
    with b.function("nd", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([3, 10, 70], FP32))
        o0 = f.param("o0", ScalarType(INDEX))
        o1 = f.param("o1", ScalarType(INDEX))
        out = f.param("out", TensorType([3, 10, 70], FP32), OUT)
        t = b.let("t", make_call("tile.load", [x, [o0, o1, 0], [2, 8, 64]], {"clamp": True}))
        rows = b.let("rows", make_call("tile.reshape", [t, [16, 64]]))
        sums = b.let("sums", make_call("tile.row_sum", [rows]))
        b.eval(make_call("tile.store", [sums, [0, 0, 69], out], {"shapes": [1, 10, 1]}))
    k = compile_kernel(f.function)
    x = torch.randn(3, 10, 70)
    for o0, o1 in ((0, 0), (1, 4), (2, 6)):
        out = torch.zeros(3, 10, 70)
        k(x, o0, o1, out)
        window = torch.zeros(2, 8, 64)  # what the load sees, zero outside the tensor
        src = x[o0:o0 + 2, o1:o1 + 8, :64]
        window[:src.shape[0], :src.shape[1]] = src
        expected = torch.zeros(3, 10, 70)
        expected[0, :10, 69] = window.reshape(16, 64).sum(1)[:10]  # shapes= takes 10 of the 16 rows
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)  # row sums: any order


def test_partially_valid_middle_dim_is_a_clear_error():
    b = IRBuilder()
    with b.function("bad", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([4, 8, 64], FP32))
        out = f.param("out", TensorType([4, 8, 64], FP32), OUT)
        t = b.let("t", make_call("tile.load", [x, [0, 0, 0], [2, 8, 64]], {"valid_shape": [2, 5, 64]}))
        b.eval(make_call("tile.store", [t, [0, 0, 0], out]))
    with pytest.raises(KernelCompileError, match="only the first leading dim"):
        compile_kernel(f.function)


@pytest.mark.parametrize("dtype", [FP32, FP16, BF16, INT32, INT16, INT8])
def test_atomic_add_store(dtype):
    b = IRBuilder()
    with b.function("acc", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([2, 5, 40], dtype))
        out = f.param("out", TensorType([2, 5, 40], dtype), INOUT)
        t = b.let("t", make_call("tile.load", [x, [1, 1, 8], [1, 4, 32]]))
        b.eval(make_call("tile.store", [t, [0, 1, 0], out], {"atomic": AtomicType.Add}))
    k = compile_kernel(f.function)
    td = dtype.to_torch()
    if dtype.is_float:
        x, out = (torch.randn(2, 5, 40) * 4).to(td), (torch.randn(2, 5, 40) * 4).to(td)
    else:
        x, out = (torch.randint(-50, 50, (2, 5, 40), dtype=td) for _ in range(2))
    expected = out.clone()
    expected[0, 1:5, :32] += x[1, 1:5, 8:40]  # one rounding per element, as torch does
    k(x, out)
    assert torch.equal(out, expected)


def _run_pipeline(source: str, *args: torch.Tensor):
    program = pl.parse(source)
    compiled = pl.compile(program, config=RunConfig(verify=True), entry="main")
    expected = run_torch_ref(program, *[a.clone() for a in args])
    return compiled(*args), expected


def test_spmd_blocks_atomically_add_into_one_output():
    got, expected = _run_pipeline('''
import plang as pl


@pl.program
class Sum:
    @pl.function
    def main(self, x: pl.Tensor[[8, 16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.spmd(8, name_hint="k"):
            i = pl.tile.get_block_idx()
            t = pl.reshape(pl.slice(x, [1, 16, 64], [i, 0, 0]), [16, 64])
            out = pl.assemble(out, t, [0, 0], atomic=pl.AtomicType.Add)
        return out
''', x := torch.randn(8, 16, 64), torch.zeros(16, 64))
    torch.testing.assert_close(got, expected)  # fp32 sums in any order
    torch.testing.assert_close(got, x.sum(0))


def test_rank_4_program_through_the_pipeline():
    got, expected = _run_pipeline('''
import plang as pl


@pl.program
class Heads:
    @pl.function
    def main(self, x: pl.Tensor[[2, 3, 64, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 3, 64, 128], pl.FP32]]) -> pl.Tensor[[2, 3, 64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):
            for b in pl.range(2):
                for h in pl.range(3):
                    for r in pl.range(2):
                        t = pl.slice(x, [1, 1, 32, 128], [b, h, r * 32, 0])
                        out = pl.assemble(out, pl.exp(t), [b, h, r * 32, 0])
        return out
''', torch.randn(2, 3, 64, 128), torch.zeros(2, 3, 64, 128))
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=0)


def test_tensor_dim_inside_a_kernel():
    got, expected = _run_pipeline('''
import plang as pl

N = pl.dynamic("N")


@pl.program
class Dim:
    @pl.function
    def main(self, x: pl.Tensor[[N, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[N, 64], pl.FP32]]) -> pl.Tensor[[N, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):
            rows = pl.tensor.dim(x, -2)
            for r in pl.range(0, rows, 32):
                t = pl.slice(x, [32, 64], [r, 0])
                out = pl.assemble(out, pl.tensor.adds(t, pl.cast(rows, pl.FP32)), [r, 0])
        return out
''', x := torch.randn(96, 64), torch.zeros(96, 64))
    assert torch.equal(got, expected) and torch.equal(got, x + 96)


def _operands(dtype, *shapes: tuple[int, ...]) -> list[torch.Tensor]:
    if dtype is INT8:
        return [torch.randint(-8, 8, shape, dtype=torch.int8) for shape in shapes]
    return [torch.randn(*shape).to(dtype.to_torch()) for shape in shapes]


def _check_product(got: torch.Tensor, expected: torch.Tensor, exact: torch.Tensor) -> None:
    """`got` against the torch reference run and an independent torch product in a wide dtype."""
    if got.dtype is torch.int32:
        assert torch.equal(got, expected) and torch.equal(got, exact.to(torch.int32))
    else:
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)  # fp32 sums in any order
        torch.testing.assert_close(got, exact.to(got.dtype), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype, flags", [(FP32, "a_trans=True, b_trans=True"), (FP32, "a_trans=True"),
                                          (FP32, "b_trans=True"), (FP16, "a_trans=True, b_trans=True"),
                                          (BF16, "b_trans=True"), (INT8, "a_trans=True, b_trans=True")],
                         ids=lambda x: getattr(x, "name", x))
def test_matmul_with_transposed_operands(dtype, flags):
    a_trans, b_trans = "a_trans" in flags, "b_trans" in flags
    a_shape, b_shape = (64, 32) if a_trans else (32, 64), (48, 64) if b_trans else (64, 48)
    a, b = _operands(dtype, a_shape, b_shape)
    acc = "INT32" if dtype is INT8 else "FP32"
    got, expected = _run_pipeline(f'''
import plang as pl


@pl.program
class T:
    @pl.function
    def main(self, a: pl.Tensor[{list(a_shape)}, pl.{dtype.name}],
             b: pl.Tensor[{list(b_shape)}, pl.{dtype.name}],
             out: pl.Out[pl.Tensor[[32, 48], pl.{acc}]]) -> pl.Tensor[[32, 48], pl.{acc}]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):
            c = pl.matmul(a, b, {flags})
            out = pl.assemble(out, c, [0, 0])
        return out
''', a, b, torch.zeros(32, 48, dtype=torch.int32 if dtype is INT8 else torch.float32))
    wide = torch.float64 if dtype.is_float else torch.int64
    lhs, rhs = a.to(wide), b.to(wide)
    _check_product(got, expected, (lhs.T if a_trans else lhs) @ (rhs.T if b_trans else rhs))


@pytest.mark.parametrize("dtype", [FP16, INT8], ids=lambda d: d.name)
def test_matmul_acc_over_k_slices_with_transposed_right_operand(dtype):
    # scores = q @ k^T accumulated over four 32-wide slices of the head dim, per 16-row block
    # of q; each k slice is transposed where it is loaded
    q, k = _operands(dtype, (32, 128), (48, 128))
    acc = "INT32" if dtype is INT8 else "FP32"
    got, expected = _run_pipeline(f'''
import plang as pl


@pl.program
class S:
    @pl.function
    def main(self, q: pl.Tensor[[32, 128], pl.{dtype.name}], k: pl.Tensor[[48, 128], pl.{dtype.name}],
             out: pl.Out[pl.Tensor[[32, 48], pl.{acc}]]) -> pl.Tensor[[32, 48], pl.{acc}]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
            for r in pl.range(0, 32, 16):
                c = pl.matmul(pl.slice(q, [16, 32], [r, 0]), pl.slice(k, [48, 32], [0, 0]), b_trans=True)
                for d in pl.range(32, 128, 32):
                    c = pl.matmul_acc(c, pl.slice(q, [16, 32], [r, d]), pl.slice(k, [48, 32], [0, d]),
                                      b_trans=True)
                out = pl.assemble(out, c, [r, 0])
        return out
''', q, k, torch.zeros(32, 48, dtype=torch.int32 if dtype is INT8 else torch.float32))
    wide = torch.float64 if dtype.is_float else torch.int64
    _check_product(got, expected, q.to(wide) @ k.to(wide).T)
