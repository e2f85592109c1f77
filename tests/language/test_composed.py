"""The reference spellings composed of plang ops (`pl.create_l1`, `pl.gather_row`,
`pl.paged_gather`, `pl.part_add` / `part_mul` / `part_max` / `part_min`), end to end on the
chip and through the torch reference, against torch written here."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref

GATHER_ROW = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[64, 32], pl.FP16], n: pl.Tensor[[1], pl.INT32],
             eye: pl.Tensor[[16, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.cast(pl.read(n, [0]), pl.INDEX)
            kv = pl.create_l1([16, 32], pl.FP16)
            kv = pl.gather_row(kv, src, [0, 0], [40, 0], [16, 32])
            kv = pl.gather_row(kv, src, [2, 0], [rows, 0], [8, 32], valid_shape=[rows, 32])
            out = pl.assemble(out, pl.matmul(eye, kv, out_dtype=pl.FP32), [0, 0])
        return out
"""


@pytest.mark.parametrize("rows", [0, 3, 8])
def test_gather_row_writes_the_valid_rows_of_the_window(rows):
    prog = pl.parse(GATHER_ROW)
    src = torch.arange(64 * 32).reshape(64, 32).remainder(509).half()
    n, eye = torch.tensor([rows], dtype=torch.int32), torch.eye(16).half()
    out = torch.zeros(16, 32)
    pl.compile(prog)(src, n, eye, out)
    expected = src[40:56].clone()
    expected[2:2 + rows] = src[rows:2 * rows]
    assert torch.equal(out, expected.float())
    assert torch.equal(run_torch_ref(prog, src, n, eye, torch.zeros(16, 32)), expected.float())


PAGED = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[64, 24], pl.FP32], idx: pl.Tensor[[1, 6], pl.INT32],
             bt: pl.Tensor[[8], pl.INT32],
             out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            g = pl.paged_gather(src, idx, bt, block_size=8, size=16, max_indices=8, space=pl.MemorySpace.Vec,
                                col_off=4)
            out = pl.assemble(out, g, [0, 0])
        return out
"""


def test_paged_gather_reads_rows_through_the_block_table():
    prog = pl.parse(PAGED)
    src = torch.randn(64, 24)
    idx = torch.tensor([[0, 9, 17, 63, 31, 8]], dtype=torch.int32)
    bt = torch.tensor([7, 0, 3, 1, 6, 2, 5, 4], dtype=torch.int32)
    out = torch.full((8, 16), 5.0)
    pl.compile(prog)(src, idx, bt, out)
    phys = [int(bt[i // 8]) * 8 + i % 8 for i in idx[0].tolist()]
    assert torch.equal(out[:6], src[phys, 4:20])
    ref = run_torch_ref(prog, src, idx, bt, torch.full((8, 16), 5.0))
    assert torch.equal(ref[:6], src[phys, 4:20])


def test_paged_gather_checks_its_arguments():
    with pytest.raises(pl.Error, match="must hold 1 to max_indices \\(4\\) static entries"):
        pl.parse(PAGED.replace("max_indices=8", "max_indices=4").replace("[[8, 16]", "[[4, 16]"))
    with pytest.raises(pl.Error, match="space must be pl.MemorySpace.Mat or Vec"):
        pl.parse(PAGED.replace("pl.MemorySpace.Vec", "pl.MemorySpace.Left"))


PART = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, src0: pl.Tensor[[16, 16], pl.FP32], src1: pl.Tensor[[16, 16], pl.FP32],
               n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
               ) -> pl.Tensor[[16, 16], pl.FP32]:
        t0: pl.Tile[[16, 16], pl.FP32] = pl.load(src0, [0, 0], [16, 16])
        t1: pl.Tile[[16, 16], pl.FP32] = pl.load(src1, [0, 0], [16, 16], valid_shape=[ROWS, COLS])
        o: pl.Tile[[16, 16], pl.FP32] = pl.SPELLING(t0, t1)
        out = pl.store(o, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src0: pl.Tensor[[16, 16], pl.FP32], src1: pl.Tensor[[16, 16], pl.FP32],
             n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.kernel(src0, src1, n, out)
        return out
"""
TORCH_OPS = {"part_add": torch.add, "part_mul": torch.mul, "part_max": torch.maximum,
             "part_min": torch.minimum}


def _part_operands():
    a = torch.arange(256, dtype=torch.float32).reshape(16, 16).remainder(13) - 6
    a[0, :4] = torch.tensor([float("-inf"), float("inf"), float("nan"), -0.0])
    a[15, 12:] = torch.tensor([float("-inf"), float("inf"), float("nan"), -0.0])  # where src1 is not valid
    b = torch.arange(256, dtype=torch.float32).reshape(16, 16).remainder(7) - 3
    a[1, 0], b[1, 0], b[2, 0] = 2.0, -0.0, -0.0  # signed zeros: 2 * -0 = -0, -0 + -0 = -0
    a[2, 0] = -0.0
    return a, b


def _assert_same_bits(got, expected, signed_zeros=True):
    """Equal, NaN where NaN, and (`signed_zeros`) -0 where -0: a max / min of -0 and +0 may be
    either zero in plang, as a row max / min is (docs/performance.md)."""
    torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=True)
    numbers = ~expected.isnan()
    assert not signed_zeros or torch.equal(got.signbit()[numbers], expected.signbit()[numbers])


@pytest.mark.parametrize("spelling", ["part_add", "part_mul", "part_max", "part_min", "tile.part_max"])
@pytest.mark.parametrize("rows, cols", [(16, 16), (16, 5), (7, 16), (3, 9), ("n", 11)])
def test_a_partial_op_combines_where_both_are_valid_and_copies_src0_elsewhere(spelling, rows, cols):
    text = PART.replace("SPELLING", spelling).replace("ROWS", str(rows)).replace("COLS", str(cols))
    prog = pl.parse(text)
    a, b = _part_operands()
    n = 6
    valid_rows = n if rows == "n" else rows
    expected = TORCH_OPS[spelling.removeprefix("tile.")](a, b)  # the reference's golden formula
    expected[valid_rows:, :] = a[valid_rows:, :]
    expected[:, cols:] = a[:, cols:]
    out = torch.zeros(16, 16)
    pl.compile(prog)(a, b, n, out)
    signed = spelling in ("part_add", "part_mul")
    _assert_same_bits(out, expected, signed)
    _assert_same_bits(run_torch_ref(prog, a, b, n, torch.zeros(16, 16)), expected, signed)


def test_partial_ops_on_tensors_are_the_plain_ops():
    """DDR tensors are fully valid (the reference's tensor.part_* lowers to the tile op on
    fully valid tiles)."""

    @pl.jit
    def combine(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.tensor.part_mul(a, b), [0, 0])
            d = pl.assemble(d, pl.part_min(a, b), [0, 0])
        return c, d

    a, b = _part_operands()
    c, d = torch.zeros(16, 16), torch.zeros(16, 16)
    combine(a, b, c, d)
    _assert_same_bits(c, a * b)
    _assert_same_bits(d, torch.minimum(a, b), signed_zeros=False)


@pytest.mark.parametrize("call, message", [
    ("pl.tile.part_add(src0, src1)",
     r"pl\.tile\.part_add takes two tiles, got Tensor\[\[16, 16\], FP32\] and Tensor\[\[16, 16\], FP32\]"),
    ("pl.part_max(t0, src1)", r"pl\.part_max takes two tiles or two tensors, got Tile"),
])
def test_partial_ops_want_two_operands_of_one_kind(call, message):
    text = PART.replace("pl.SPELLING(t0, t1)", call).replace("ROWS", "16").replace("COLS", "16")
    with pytest.raises(pl.ParserTypeError, match=message):
        pl.parse(text)
