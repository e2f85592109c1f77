# ruff: noqa: E501  (DSL source text)
"""Forms the reference's hardware tests (its `tests/st/runtime/ops`) write, which plang
once rejected or computed differently, each on the chip and through the torch reference
against torch written here: string accumulation phases and the narrowed result of a
gemv / matmul, any scratch dtype for prelu, a scalar rhs to the explicit binary ops,
packed select masks of 8- to 32-bit carriers (also shaped like the values), a float
select scalar wrapping into an unsigned dtype, and leaky ReLU with a slope above 1."""

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref


def run_both(text: str, inputs: list[torch.Tensor], out: torch.Tensor) -> torch.Tensor:
    program = pl.parse(text)
    chip = out.clone()
    pl.compile(program)(*inputs, chip)
    ref = run_torch_ref(program, *inputs, out.clone())
    assert torch.equal(chip, ref)
    return chip


def kernel(params: str, out: str, body: str) -> str:
    """A program whose InCore `k(<params>, out)` runs `body` and returns `out`."""
    names = ", ".join(p.split(":")[0].strip() for p in params.split(";"))
    params = ", ".join(p.strip() for p in params.split(";"))
    return f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, {params}, out: pl.Out[{out}]) -> {out}:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}, out: pl.Out[{out}]) -> {out}:
        out = self.k({names}, out)
        return out
"""


@pytest.mark.parametrize("phase", ["unspecified", "partial", "final"])
def test_gemv_of_a_narrow_matrix_stores_its_valid_columns(phase):
    # B [64, 30] loaded as a [64, 32] box (clamped): the product is valid on 30 columns, which
    # is what the store writes
    text = kernel("a: pl.Tensor[[1, 64], pl.FP16]; b: pl.Tensor[[64, 30], pl.FP16]", "pl.Tensor[[1, 30], pl.FP32]", f"""
        ta = pl.load(a, [0, 0], [1, 64], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [64, 32], valid_shape=[64, 30], target_memory=pl.MemorySpace.Mat, clamp=True)
        out = pl.store(pl.tile.gemv(ta, tb, acc_phase="{phase}"), [0, 0], out)""")
    a, b = torch.randn(1, 64).half(), torch.randn(64, 30).half()
    got = run_both(text, [a, b], torch.zeros(1, 30))
    torch.testing.assert_close(got, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


def test_matmul_result_is_valid_on_lhs_rows_by_rhs_columns():
    text = kernel("a: pl.Tensor[[32, 16], pl.FP32]; b: pl.Tensor[[16, 32], pl.FP32]", "pl.Tensor[[20, 24], pl.FP32]", """
        ta = pl.load(a, [0, 0], [32, 16], valid_shape=[20, 16], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [16, 32], valid_shape=[16, 24], target_memory=pl.MemorySpace.Mat)
        c: pl.Tile[[32, 32], pl.FP32, pl.TileView(valid_shape=[20, 24])] = pl.matmul(ta, tb)
        out = pl.store(c, [0, 0], out)""")
    a, b = torch.randn(32, 16), torch.randn(16, 32)
    got = run_both(text, [a, b], torch.zeros(20, 24))
    torch.testing.assert_close(got, a[:20] @ b[:, :24], rtol=1e-5, atol=1e-5)


def test_prelu_takes_a_scratch_of_any_dtype():
    text = kernel("x: pl.Tensor[[16, 32], pl.FP16]; s: pl.Tensor[[16, 32], pl.FP16]", "pl.Tensor[[16, 32], pl.FP16]", """
        tx = pl.load(x, [0, 0], [16, 32])
        ts = pl.load(s, [0, 0], [16, 32])
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        out = pl.store(pl.tile.prelu(tx, ts, tmp), [0, 0], out)""")
    x, s = torch.randn(16, 32).half(), torch.rand(16, 32).half()
    got = run_both(text, [x, s], torch.zeros(16, 32, dtype=torch.float16))
    assert torch.equal(got, torch.where(x >= 0, x, x * s))
    with pytest.raises(pl.ParserTypeError, match="tile.prelu: operand 'tmp' must have rank 2"):
        pl.parse(text.replace("pl.tile.create([1, 32]", "pl.tile.create([32]"))


@pytest.mark.parametrize("slope", [0.25, 2.0, -1.5])
def test_lrelu_keeps_positives_and_scales_the_rest(slope):
    text = kernel("x: pl.Tensor[[8, 32], pl.FP32]", "pl.Tensor[[8, 32], pl.FP32]", f"""
        out = pl.store(pl.tile.lrelu(pl.load(x, [0, 0], [8, 32]), {slope}), [0, 0], out)""")
    x = torch.randn(8, 32)
    got = run_both(text, [x], torch.zeros(8, 32))
    assert torch.equal(got, torch.where(x > 0, x, x * slope))


@pytest.mark.parametrize("op, torch_op", [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul),
                                          ("div", torch.div), ("maximum", torch.maximum),
                                          ("minimum", torch.minimum)])
def test_explicit_binary_ops_take_a_scalar_rhs(op, torch_op):
    prog = pl.parse(f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]],
             out2: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> tuple[pl.Tensor[[8, 32], pl.FP32], pl.Tensor[[8, 32], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.tensor.{op}(x, 0.5), [0, 0])
            out2 = pl.store(pl.tile.{op}(pl.load(x, [0, 0], [8, 32]), rhs=1.5), [0, 0], out2)
        return out, out2
""")
    assert f"pl.tensor.{op}s(x, 0.5)" in prog.as_python()
    x = torch.randn(8, 32)
    out, out2 = torch.zeros(8, 32), torch.zeros(8, 32)
    pl.compile(prog)(x, out, out2)
    torch.testing.assert_close(out, torch_op(x, torch.tensor(0.5)))
    torch.testing.assert_close(out2, torch_op(x, torch.tensor(1.5)))


ALTERNATE = {"INT8": -86, "UINT8": 0xAA, "INT16": -21846, "UINT16": -21846, "INT32": -1431655766}
"""Mask words whose bits alternate 0, 1 from bit 0: odd columns are selected."""


@pytest.mark.parametrize("carrier", sorted(ALTERNATE))
def test_sels_reads_packed_masks_of_any_integer_width(carrier):
    # one 32-byte row of mask words per row of values; a [2, 16] INT16 mask is shaped like the
    # [2, 16] values and is still packed bits (as the reference's TSELS reads it)
    dtype = getattr(pl, carrier)
    cols = 32 // dtype.itemsize
    text = kernel(f"src: pl.Tensor[[2, 16], pl.FP32]; m: pl.Tensor[[2, {cols}], pl.{carrier}]", "pl.Tensor[[2, 16], pl.FP32]", f"""
        tmask = pl.load(m, [0, 0], [2, {cols}])
        tmp = pl.tile.create([1, 8], dtype=pl.FP32)
        out = pl.store(pl.tile.sels(tmask, pl.load(src, [0, 0], [2, 16]), tmp, -3.0), [0, 0], out)""")
    src = torch.randn(2, 16)
    mask = torch.full((2, cols), ALTERNATE[carrier]).to(dtype.to_torch() if carrier != "UINT16" else torch.int16)
    got = run_both(text, [src, mask], torch.zeros(2, 16))
    expected = torch.full((2, 16), -3.0)
    expected[:, 1::2] = src[:, 1::2]
    assert torch.equal(got, expected)


def test_a_float_select_scalar_converts_to_an_unsigned_dtype_by_wrapping():
    text = kernel("src: pl.Tensor[[2, 16], pl.UINT32]; m: pl.Tensor[[2, 8], pl.UINT32]", "pl.Tensor[[2, 16], pl.UINT32]", """
        tmp = pl.tile.create([1, 8], dtype=pl.UINT32)
        out = pl.store(pl.tile.sels(pl.load(m, [0, 0], [2, 8]), pl.load(src, [0, 0], [2, 16]), tmp, -3.0), [0, 0], out)""")
    src = torch.arange(32, dtype=torch.int32).reshape(2, 16)
    mask = torch.full((2, 8), -1431655766, dtype=torch.int32)
    got = run_both(text, [src, mask], torch.zeros(2, 16, dtype=torch.int32))
    expected = torch.full((2, 16), -3, dtype=torch.int32)  # the bits of 2**32 - 3
    expected[:, 1::2] = src[:, 1::2]
    assert torch.equal(got, expected)


def overhanging_slice(valid_rows: int):
    @pl.jit
    def rows_exp(a: pl.Tensor[[13, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.slice(a, [16, 64], [0, 0], valid_shape=[valid_rows, 64])
            out[:] = pl.exp(rows)
        return out
    return rows_exp


def test_a_slice_box_may_overhang_where_its_valid_region_does_not():
    # a [16, 64] box over 13 rows: only the 13 valid rows are read, computed and stored
    a = torch.randn(13, 64)
    out = torch.full((16, 64), 7.0)
    overhanging_slice(13)(a, out)
    torch.testing.assert_close(out[:13], a.exp())
    assert torch.equal(out[13:], torch.full((3, 64), 7.0))
    with pytest.raises(pl.ParserTypeError, match=r"slice window \[0, 14\) on axis 0 exceeds input extent 13"):
        overhanging_slice(14)(a, out)


B, S = pl.dynamic("B"), pl.dynamic("S")


@pl.jit
def chunked_cast(x: pl.Tensor[[B, S, 64], pl.BF16], out: pl.Out[pl.Tensor[[B, S, 64], pl.FP32]]):
    for b in pl.parallel(0, pl.tensor.dim(x, 0)):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
            # the chunk loop carries `out` as `o` and stores into it; the loop's result is never
            # named again, yet `out` is what it wrote
            for c, (o,) in pl.range(0, pl.tensor.dim(x, 1), 16, init_values=(out,)):
                rows = pl.min(16, pl.tensor.dim(x, 1) - c)
                t = pl.load(x, [b, c, 0], [1, 16, 64], valid_shape=[1, rows, 64])
                o = pl.store(pl.cast(t, target_type=pl.FP32), [b, c, 0], o)
                written = pl.yield_(o)  # noqa: F841
    return out


def test_a_loop_storing_into_its_carried_tensor_writes_that_tensor():
    x = torch.randn(3, 37, 64).bfloat16()
    out = torch.zeros(3, 37, 64)
    chunked_cast(x, out)
    assert torch.equal(out, x.float())
