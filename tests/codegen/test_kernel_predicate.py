"""Packed predicate masks end to end (chip and torch reference) against a packing written
here: `tile.cmp` / `tile.cmps` set bit c % 8 of byte c // 8 per element, `tile.sel` /
`tile.sels` read such a mask, and `tensor.cmp` keeps its BOOL meaning through the packed
kernel form."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref


def pack(flags: torch.Tensor, width: int) -> torch.Tensor:
    out = torch.zeros(flags.shape[0], width, dtype=torch.uint8)
    for r in range(flags.shape[0]):
        for c in range(flags.shape[1]):
            if flags[r, c]:
                out[r, c // 8] |= 1 << (c % 8)
    return out


TILE = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[6, COLS], pl.DT], b: pl.Tensor[[6, COLS], pl.DT],
          m: pl.Out[pl.Tensor[[6, WIDTH], pl.UINT8]], o: pl.Out[pl.Tensor[[6, COLS], pl.DT]],
          s: pl.Out[pl.Tensor[[6, COLS], pl.DT]]):
        x: pl.Tile[[6, COLS], pl.DT] = pl.load(a, [0, 0], [6, COLS])
        y: pl.Tile[[6, COLS], pl.DT] = pl.load(b, [0, 0], [6, COLS])
        tmp: pl.Tile[[1, 32], pl.UINT8] = pl.tile.create([1, 32], dtype=pl.UINT8)
        mask: pl.Tile[[6, WIDTH], pl.UINT8] = pl.tile.cmp(x, y, cmp_type=CMP)
        lows: pl.Tile[[6, WIDTH], pl.UINT8] = pl.tile.cmps(x, 0, cmp_type=2)
        m = pl.store(mask, [0, 0], m)
        o = pl.store(pl.tile.sel(mask, x, y, tmp), [0, 0], o)
        s = pl.store(pl.tile.sels(lows, x, tmp, 7), [0, 0], s)
        return m, o, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[6, COLS], pl.DT], b: pl.Tensor[[6, COLS], pl.DT],
             m: pl.Out[pl.Tensor[[6, WIDTH], pl.UINT8]], o: pl.Out[pl.Tensor[[6, COLS], pl.DT]],
             s: pl.Out[pl.Tensor[[6, COLS], pl.DT]]):
        m, o, s = self.k(a, b, m, o, s)
        return m, o, s
"""

CMPS = [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]


@pytest.mark.parametrize("dtype, cols, cmp", [("FP32", 20, 4), ("INT32", 5, 0), ("FP16", 300, 3)])
def test_tile_cmp_packs_bits_and_sel_reads_them(dtype, cols, cmp):
    width = -(-(-(-cols // 8)) // 32) * 32
    prog = pl.parse(TILE.replace("COLS", str(cols)).replace("WIDTH", str(width)).replace("DT", dtype)
                    .replace("CMP", str(cmp)))
    td = getattr(pl, dtype).to_torch()
    a = torch.randint(-3, 4, (6, cols)).to(td)
    b = torch.where(torch.rand(6, cols) < 0.3, a, torch.randint(-3, 4, (6, cols)).to(td))
    outs = [torch.zeros(6, width, dtype=torch.uint8), *(torch.zeros(6, cols, dtype=td) for _ in range(2))]
    chip = [o.clone() for o in outs]
    pl.compile(prog)(a, b, *chip)
    flags = CMPS[cmp](a, b)
    assert torch.equal(chip[0], pack(flags, width))
    assert torch.equal(chip[1], torch.where(flags, a, b))
    assert torch.equal(chip[2], torch.where(a < 0, a, torch.tensor(7, dtype=td)))
    for got, ref in zip(chip, run_torch_ref(prog, a, b, *outs)):
        assert torch.equal(got, ref)


TENSOR = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[8, 40], pl.FP32], f: pl.Out[pl.Tensor[[8, 40], pl.FP32]],
             g: pl.Out[pl.Tensor[[8, 40], pl.BOOL]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            f = pl.assemble(f, pl.cmp(a, 0.5, cmp_type=5), [0, 0])
            g = pl.assemble(g, a < pl.tensor.muls(a, 2.0), [0, 0])
        return f, g
"""


def test_tensor_cmp_is_still_an_elementwise_bool():
    prog = pl.parse(TENSOR)
    a = torch.randn(8, 40)
    f, g = torch.zeros(8, 40), torch.zeros(8, 40, dtype=torch.bool)
    pl.compile(prog)(a, f, g)
    assert torch.equal(f, (a >= 0.5).float()) and torch.equal(g, a < 2 * a)
    rf, rg = run_torch_ref(prog, a, torch.zeros(8, 40), torch.zeros(8, 40, dtype=torch.bool))
    assert torch.equal(rf, f) and torch.equal(rg, g)
