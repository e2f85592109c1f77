"""Row / column reductions through the MLIR path vs torch, every dtype, honoring valid_shape.

Tolerances: float row sums / products accumulate in FP32 in a different order than torch:
FP32 row sums within the FP32 rounding bound of a float64 sum (relative to sum |x|), FP32
products rtol 1e-5, one half-precision ulp for FP16 / BF16; a column reduction rounds every
step to the storage dtype (row after row, or as a binary tree given a scratch tile), which
the reference replays; max / min / argmax are exact.
"""

from __future__ import annotations

import pytest
import torch
from _kernel_util import FLOAT_DTYPES, INT_DTYPES, rand, region, tile_kernel

import plang as pl
from plang.dtypes import FP32, INT32, DataType
from plang.ir.ops import make_call

SHAPE, TILE, OFF, VALID = (12, 140), (6, 100), (3, 20), (5, 77)


def _col_steps(op: str, x: torch.Tensor) -> torch.Tensor:
    """Column `op` of float `x` one row after another, rounded to x's dtype at every step."""
    acc = x[0:1].clone()
    for row in x[1:]:
        acc = (acc + row if op == "sum" else acc * row).to(x.dtype)
    return acc


def _col_tree(x: torch.Tensor) -> torch.Tensor:
    """Column sum of `x` as the binary tree of the scratch-tile form, rounded at every step."""
    buf, cnt = x.clone(), x.shape[0]
    while cnt > 1:
        half = cnt // 2
        buf[:half] = (buf[0:2 * half:2] + buf[1:2 * half:2]).to(x.dtype)
        if cnt % 2:
            buf[0] = (buf[0] + buf[cnt - 1]).to(x.dtype)
        cnt = half
    return buf[0:1]


def _ref(op: str, x: torch.Tensor, dim: int) -> torch.Tensor:
    if op in ("argmax", "argmin"):
        return getattr(x, op)(dim=dim, keepdim=True).to(torch.int32)
    if dim == 0 and x.is_floating_point() and op in ("sum", "prod"):
        return _col_steps(op, x)
    w = x.float() if x.is_floating_point() else x.long()
    r = {"sum": w.sum(dim, keepdim=True), "prod": w.prod(dim, keepdim=True),
         "max": w.amax(dim, keepdim=True), "min": w.amin(dim, keepdim=True)}[op]
    return r.to(x.dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod", "argmax", "argmin"])
@pytest.mark.parametrize("direction", ["row", "col"])
def test_reduction(direction: str, op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    out_d = INT32 if op.startswith("arg") else d
    vr, vc = VALID
    out_shape = (vr, 1) if direction == "row" else (1, vc)
    needs_tmp = direction == "row" or op.startswith("arg")
    k = tile_kernel(f"{direction}_{op}", [d], out_d, SHAPE, TILE, OFF,
                    lambda b, t: make_call(f"tile.{direction}_{op}", [t[0]] + ([t[0]] if needs_tmp else [])),
                    valid=VALID, out_tile_shape=out_shape)
    low, high = (-1.5, 1.5) if op == "prod" else (-4, 4)
    x = rand(SHAPE, d, low, high)
    if op == "prod" and not d.is_float:
        x = torch.randint(-2, 3, SHAPE, dtype=d.to_torch())
    out = torch.zeros(out_shape, dtype=out_d.to_torch())
    k(x, out)
    want = _ref(op, region(x, OFF, VALID), 1 if direction == "row" else 0)
    if direction == "row" and op == "sum" and d is FP32:
        # an FP32 sum of vc terms is off by at most (vc - 1) * 2^-24 * sum |x|, whatever its
        # order; a row's sum may cancel towards 0, so compare to float64, normalised by sum |x|
        xs = region(x, OFF, VALID).double()
        mag = xs.abs().sum(1, keepdim=True)
        torch.testing.assert_close(out.double() / mag, xs.sum(1, keepdim=True) / mag, rtol=0,
                                   atol=(vc - 1) * 2.0 ** -24)
    elif d.is_float and op in ("sum", "prod"):
        tol = 1e-5 if d.bits == 32 else 1e-2
        torch.testing.assert_close(out.float(), want.float(), rtol=tol, atol=tol)
    else:
        assert torch.equal(out, want)


@pytest.mark.parametrize("cols", [37, 64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_row_max_and_min_propagate_nan_and_infinities(op: str, cols: int) -> None:
    """NaN anywhere in a row (first, mid-chunk, last valid column) makes its max / min NaN;
    infinities and all-infinite rows reduce as torch's do. 64 columns are an even number of
    chunks at every vector width but AVX-512's, which the reduction takes two a trip."""
    k = tile_kernel(f"r{op}", [FP32], FP32, (6, cols), (6, cols), (0, 0),
                    lambda b, t: make_call(f"tile.row_{op}", [t[0], t[0]]), out_tile_shape=(6, 1))
    x = torch.randn(6, cols)
    x[1, 0] = x[2, 21] = x[3, cols - 1] = float("nan")
    x[4, 5], x[4, 30] = float("inf"), float("-inf")
    x[5] = float("-inf") if op == "max" else float("inf")
    out = torch.zeros(6, 1)
    k(x, out)
    want = torch.amax(x, 1, keepdim=True) if op == "max" else torch.amin(x, 1, keepdim=True)
    torch.testing.assert_close(out, want, equal_nan=True, rtol=0, atol=0)
    assert out[1:4].isnan().all() and not out[[0, 4, 5]].isnan().any()


@pytest.mark.parametrize("cols, valid", [(200, 150), (256, 250)])
def test_softmax_with_fused_reductions(cols: int, valid: int) -> None:
    """load → row_max → row_expand_expdif → row_sum → row_expand_div → store: the row
    reductions are computed in their producer's pass and the divide streams into the store.
    256 columns are an even number of chunks, taken two a trip; the last pair's second chunk
    is partly valid."""
    def body(b, t):
        tmp = b.let("tmp", make_call("tile.create", [[4, cols]], {"dtype": FP32}))
        mx = b.let("mx", make_call("tile.row_max", [t[0], tmp]))
        e = b.let("e", make_call("tile.row_expand_expdif", [t[0], mx]))
        s = b.let("s", make_call("tile.row_sum", [e, tmp]))
        return make_call("tile.row_expand_div", [e, s])

    k = tile_kernel("softmax", [FP32], FP32, (6, cols + 30), (4, cols), (1, 9), body, valid=(4, valid))
    x = torch.randn(6, cols + 30) * 5
    out = torch.zeros(6, cols + 30)
    k(x, out)
    want = torch.zeros(6, cols + 30)
    want[1:5, 9:9 + valid] = torch.softmax(x[1:5, 9:9 + valid], dim=-1)
    torch.testing.assert_close(out, want, rtol=2e-6, atol=1e-7)


def _col_sum_program(rows: int, cols: int, dtype, tree: bool):
    @pl.program
    class ColSum:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[rows, cols], dtype],
                 out: pl.Out[pl.Tensor[[1, cols], dtype]]) -> pl.Tensor[[1, cols], dtype]:
            t = pl.load(x, [0, 0], [rows, cols])
            if tree:
                tmp = pl.tile.create([rows, cols], dtype=dtype, target_memory=pl.MemorySpace.Vec)
                s = pl.tile.col_sum(t, tmp)
            else:
                s = pl.tile.col_sum(t)
            return pl.store(s, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def run(self, x: pl.Tensor[[rows, cols], dtype],
                out: pl.Out[pl.Tensor[[1, cols], dtype]]) -> pl.Tensor[[1, cols], dtype]:
            return self.main(x, out)

    return ColSum


@pytest.mark.parametrize("rows", [1, 7, 32])
@pytest.mark.parametrize("tree", [False, True], ids=["sequential", "tree"])
@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
def test_col_sum_rounding_order(dtype: str, tree: bool, rows: int) -> None:
    """`pl.tile.col_sum` in half precision: row after row without a scratch tile, a binary
    tree with one, every partial sum rounded (bit-exact against the replayed order)."""
    d = DataType.from_name(dtype)
    compiled = pl.compile(_col_sum_program(rows, 64, getattr(pl, dtype), tree))
    x = torch.randn(rows, 64).to(d.to_torch())
    out = torch.zeros(1, 64, dtype=d.to_torch())
    compiled(x, out)
    assert torch.equal(out, _col_tree(x) if tree else _col_steps("sum", x))
