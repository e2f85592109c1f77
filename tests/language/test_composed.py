"""The reference spellings composed of plang ops (`pl.create_l1`, `pl.gather_row`,
`pl.paged_gather`), end to end on the chip and through the torch reference, against torch
written here."""

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
