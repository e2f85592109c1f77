"""The indexing forms the reference's programs use, end to end on the chip and through the
torch reference, each against torch written here: gather along any axis, the mask forms of
gather / scatter (`pl.tile.MaskPattern`), the compare form of gather, `scatter_update` and
`tile.mscatter`."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref
from plang.errors import ParserTypeError

PATTERNS = {"P0101": (2, 0), "P1010": (2, 1), "P0001": (4, 0), "P0010": (4, 1), "P0100": (4, 2),
            "P1000": (4, 3), "P1111": (1, 0)}


def tensor_program(params: str, outs: str, body: str) -> pl.Program:
    """`main(<params>, <outs>)` running `body` in one core-group region, returning its outs."""
    names = [p.split(":")[0].strip() for p in outs.split(";")]
    out_params = ", ".join(f"{p.split(':')[0].strip()}: pl.Out[{p.split(':', 1)[1].strip()}]"
                           for p in outs.split(";"))
    ret = ", ".join(names)
    src = f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, {params}, {out_params}):
        with pl.at(level=pl.Level.CORE_GROUP):
{body}
        return {ret}
"""
    return pl.parse(src)


def run_both(program: pl.Program, inputs: list[torch.Tensor], outs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Run on the chip and through the torch reference; both must agree bit for bit."""
    chip = [o.clone() for o in outs]
    pl.compile(program)(*inputs, *chip)
    ref = run_torch_ref(program, *inputs, *[o.clone() for o in outs])
    ref = list(ref) if isinstance(ref, tuple) else [ref]
    for c, r in zip(chip, ref):
        assert torch.equal(c, r)
    return chip


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_along_every_axis_of_a_rank3_tensor(dim):
    prog = tensor_program("x: pl.Tensor[[4, 6, 8], pl.FP32], i: pl.Tensor[[3, 5, 8], pl.INT32]",
                          "o: pl.Tensor[[3, 5, 8], pl.FP32]", f"""
            g = pl.tensor.gather(x, dim={dim}, index=i)
            o = pl.assemble(o, g, [0, 0, 0])""")
    x = torch.randn(4, 6, 8)
    idx = torch.randint(0, x.shape[dim], (3, 5, 8), dtype=torch.int32)
    got, = run_both(prog, [x, idx], [torch.zeros(3, 5, 8)])
    assert torch.equal(got, torch.gather(x, dim, idx.long()))


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_gather_mask_keeps_the_pattern_columns(name):
    stride, phase = PATTERNS[name]
    cols = 16 // stride
    prog = tensor_program("x: pl.Tensor[[8, 16], pl.FP32]", f"o: pl.Tensor[[8, {cols}], pl.FP32]", f"""
            g = pl.gather(x, mask_pattern=pl.tile.MaskPattern.{name})
            o = pl.assemble(o, g, [0, 0])""")
    x = torch.randn(8, 16)
    got, = run_both(prog, [x], [torch.zeros(8, cols)])
    assert torch.equal(got, x[:, phase::stride])


def test_gather_mask_output_dtype_reinterprets_the_bits():
    prog = tensor_program("x: pl.Tensor[[4, 32], pl.FP16]", "o: pl.Tensor[[4, 16], pl.INT16]", """
            g = pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT16)
            o = pl.assemble(o, g, [0, 0])""")
    x = torch.randn(4, 32).half()
    got, = run_both(prog, [x], [torch.zeros(4, 16, dtype=torch.int16)])
    assert torch.equal(got, x[:, 1::2].contiguous().view(torch.int16))


@pytest.mark.parametrize("name", ["P0101", "P1000", "P1111"])
def test_scatter_mask_writes_the_pattern_columns_of_dst(name):
    stride, phase = PATTERNS[name]
    prog = tensor_program(f"x: pl.Tensor[[8, {16 // stride}], pl.INT32], d: pl.Tensor[[8, 16], pl.INT32]",
                          "o: pl.Tensor[[8, 16], pl.INT32]", f"""
            s = pl.scatter(x, mask_pattern=pl.tile.MaskPattern.{name}, dst=d)
            o = pl.assemble(o, s, [0, 0])""")
    x = torch.randint(0, 99, (8, 16 // stride), dtype=torch.int32)
    d = torch.full((8, 16), -7, dtype=torch.int32)
    got, = run_both(prog, [x, d], [torch.zeros(8, 16, dtype=torch.int32)])
    expected = d.clone()
    expected[:, phase::stride] = x
    assert torch.equal(got, expected)


def test_chained_mask_scatters_interleave_two_halves():
    prog = tensor_program("e: pl.Tensor[[4, 16], pl.FP32], f: pl.Tensor[[4, 16], pl.FP32], "
                          "d: pl.Tensor[[4, 32], pl.FP32]", "o: pl.Tensor[[4, 32], pl.FP32]", """
            s = pl.tensor.scatter(e, mask_pattern=pl.tile.MaskPattern.P0101, dst=d)
            s = pl.tensor.scatter(f, mask_pattern=pl.tile.MaskPattern.P1010, dst=s)
            o = pl.assemble(o, s, [0, 0])""")
    e, f = torch.randn(4, 16), torch.randn(4, 16)
    got, = run_both(prog, [e, f, torch.zeros(4, 32)], [torch.zeros(4, 32)])
    assert torch.equal(got[:, 0::2], e) and torch.equal(got[:, 1::2], f)


def test_compare_form_returns_the_first_matching_indices_and_their_count():
    prog = tensor_program("x: pl.Tensor[[6, 40], pl.INT32], k: pl.Tensor[[1], pl.INT32]",
                          "o: pl.Tensor[[6, 8], pl.INT32]; n: pl.Tensor[[1, 6], pl.INT32]", """
            kv: pl.Scalar[pl.INT32] = pl.tensor.read(k, [0])
            idx, cnt = pl.gather(x, kvalue=kv, cmp_mode="ge", out_cols=8, offset=100)
            o = pl.assemble(o, idx, [0, 0])
            n = pl.assemble(n, cnt, [0, 0])""")
    x = torch.randint(0, 10, (6, 40), dtype=torch.int32)
    x[0] = 0  # no match in row 0; row 1 matches everywhere
    x[1] = 9
    outs = [torch.full((6, 8), -1, dtype=torch.int32), torch.zeros(1, 6, dtype=torch.int32)]
    got_idx, got_cnt = run_both(prog, [x, torch.tensor([7], dtype=torch.int32)], outs)
    for r in range(6):
        hits = [j + 100 for j in range(40) if x[r, j] >= 7][:8]
        assert got_idx[r].tolist() == hits + [0] * (8 - len(hits))
        assert got_cnt[0, r] == len(hits)


def test_the_forms_do_not_mix():
    with pytest.raises(ParserTypeError, match="the mask form .* no other form's arguments; got dim"):
        tensor_program("x: pl.Tensor[[8, 16], pl.FP32]", "o: pl.Tensor[[8, 8], pl.FP32]", """
            o = pl.gather(x, dim=1, mask_pattern=1)""")
    with pytest.raises(ParserTypeError, match="the compare form needs out_cols="):
        tensor_program("x: pl.Tensor[[8, 16], pl.FP32]", "o: pl.Tensor[[8, 8], pl.FP32]", """
            o, c = pl.gather(x, kvalue=1.0, cmp_mode="eq")""")
    with pytest.raises(ParserTypeError, match="the mask form needs dst="):
        tensor_program("x: pl.Tensor[[8, 16], pl.FP32]", "o: pl.Tensor[[8, 8], pl.FP32]", """
            o = pl.scatter(x, mask_pattern=1)""")
    with pytest.raises(ParserTypeError, match="unexpected keyword argument 'mask_pattern'"):
        tensor_program("x: pl.Tensor[[8, 16], pl.FP32]", "o: pl.Tensor[[8, 8], pl.FP32]", """
            o = pl.scatter_update(x, mask_pattern=1)""")


def test_scatter_update_replaces_rows_last_write_wins():
    prog = tensor_program("x: pl.Tensor[[16, 24], pl.FP16], i: pl.Tensor[[2, 4], pl.INT32], "
                          "s: pl.Tensor[[8, 24], pl.FP16]", "o: pl.Tensor[[16, 24], pl.FP16]", """
            u = pl.scatter_update(x, -2, i, s)
            o = pl.assemble(o, u, [0, 0])""")
    x, s = torch.randn(16, 24).half(), torch.randn(8, 24).half()
    idx = torch.tensor([[3, 0, 3, 15], [99, -1, 7, 0]], dtype=torch.int32)  # duplicates, out of range
    got, = run_both(prog, [x, idx, s], [torch.zeros(16, 24).half()])
    expected = x.clone()
    for k, row in enumerate(idx.flatten().tolist()):
        if 0 <= row < 16:
            expected[row] = s[k]
    assert torch.equal(got, expected)


def test_scatter_update_4d_blocks():
    prog = tensor_program("x: pl.Tensor[[4, 4, 1, 16], pl.FP32], i: pl.Tensor[[1, 3], pl.INT32], "
                          "s: pl.Tensor[[1, 3, 1, 16], pl.FP32]", "o: pl.Tensor[[4, 4, 1, 16], pl.FP32]", """
            u = pl.tensor.scatter_update(x, i, s, dim=-2)
            o = pl.assemble(o, u, [0, 0, 0, 0])""")
    x, s = torch.randn(4, 4, 1, 16), torch.randn(1, 3, 1, 16)
    idx = torch.tensor([[5, 12, 0]], dtype=torch.int32)
    got, = run_both(prog, [x, idx, s], [torch.zeros(4, 4, 1, 16)])
    expected = x.clone().reshape(16, 16)
    expected[[5, 12, 0]] = s.reshape(3, 16)
    assert torch.equal(got, expected.reshape(4, 4, 1, 16))


MSCATTER = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Tensor[[4, 24], pl.FP32], i: pl.Tensor[[4, 24], pl.INT32],
          out: pl.Out[pl.Tensor[OUT, pl.FP32]]) -> pl.Tensor[OUT, pl.FP32]:
        st: pl.Tile[[4, 24], pl.FP32] = pl.load(s, [0, 0], [4, 24])
        it: pl.Tile[[4, 24], pl.INT32] = pl.load(i, [0, 0], [4, 24])
        out = pl.mscatter(st, it, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[4, 24], pl.FP32], i: pl.Tensor[[4, 24], pl.INT32],
             out: pl.Out[pl.Tensor[OUT, pl.FP32]]) -> pl.Tensor[OUT, pl.FP32]:
        out = self.k(s, i, out)
        return out
"""


@pytest.mark.parametrize("shape", [[200], [10, 20]])
def test_mscatter_stores_to_flat_indices(shape):
    prog = pl.parse(MSCATTER.replace("OUT", str(shape)))
    s = torch.randn(4, 24)
    idx = torch.randperm(200)[:96].to(torch.int32).reshape(4, 24)
    idx[0, 0], idx[3, 23] = 200, -5  # out of range: not written
    got, = run_both(prog, [s, idx], [torch.full(shape, 9.0)])
    expected = torch.full((200,), 9.0)
    ok = (idx >= 0) & (idx < 200)
    expected[idx[ok].long()] = s[ok]
    assert torch.equal(got.reshape(-1), expected)


TILE_GATHER = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 32], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
          out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        xt: pl.Tile[[4, 32], pl.FP32] = pl.load(x, [0, 0], [4, 32])
        it: pl.Tile[[4, 8], pl.INT32] = pl.load(i, [0, 0], [4, 8])
        tmp: pl.Tile[[4, 8], pl.INT32] = pl.tile.create([4, 8], dtype=pl.INT32)
        g: pl.Tile[[4, 8], pl.FP32] = pl.tile.gather(xt, it, tmp)
        out = pl.store(g, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 32], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
             out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        out = self.k(x, i, out)
        return out
"""


def test_tile_gather_with_the_reference_workspace_is_the_flat_form():
    x, idx = torch.randn(4, 32), torch.randint(0, 128, (4, 8), dtype=torch.int32)
    got, = run_both(pl.parse(TILE_GATHER), [x, idx], [torch.zeros(4, 8)])
    assert torch.equal(got, x.reshape(-1)[idx.long()])
