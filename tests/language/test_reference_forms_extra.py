"""More reference forms: a store converting to the tensor's dtype, `pl.AUTO`, `pl.cast` of a
scalar with `target_type=`, literal-only arithmetic through the printer, `tile.create`
layout hints (`transpose=`, `flat_layout=`) and `tile.move` to any on-chip memory."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.codegen.kernel import compile_kernel
from plang.codegen.torch_ref import run_torch_ref
from plang.codegen.torch_ref_lib import cast as ref_cast

from ._round_trip import round_trip

STORE_CONVERT = '''
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[4, 40], pl.FP32],
      out: pl.Out[pl.Tensor[[4, 40], pl.{dst}]]) -> pl.Tensor[[4, 40], pl.{dst}]:
    t = pl.tile.load(a, [0, 0], [4, 40])
    o = pl.tile.store(t, [0, 0], out)
    return o
'''


@pytest.mark.parametrize("dst", ["FP16", "BF16", "INT32", "INT8"])
def test_store_converts_to_the_tensor_dtype(dst):
    fn, _ = round_trip(STORE_CONVERT.format(dst=dst))
    td = getattr(pl, dst).to_torch()
    x = torch.randn(4, 40) * 100
    x[0, :4] = torch.tensor([0.5, 1.5, -2.5, 1e6])
    want = ref_cast(x, td)
    got = run_torch_ref(fn, x, torch.zeros(4, 40, dtype=td))
    got = got[0] if isinstance(got, (tuple, list)) else got
    assert torch.equal(got, want)
    out = torch.zeros(4, 40, dtype=td)
    compile_kernel(fn)(x, out)
    assert torch.equal(out, want)


def test_reserve_buffer_base_auto():
    prog, text = round_trip('''
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    buf = pl.reserve_buffer(name="slots", size=4096, base=pl.AUTO)
    return a
''')
    assert pl.AUTO == -1
    assert "base=-1" in text or "pl.reserve_buffer(name='slots', size=4096)" in text


SCALAR_CAST = '''
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[4, 16], pl.FP32], n: pl.Scalar[pl.INT32],
      out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
    row: pl.Scalar[pl.INDEX] = pl.cast(n, target_type=pl.INDEX)
    t = pl.tile.load(a, [row, 0], [1, 16])
    o = pl.tile.store(t, [row, 0], out)
    return o
'''


def test_cast_of_a_scalar_with_target_type_keyword():
    fn, text = round_trip(SCALAR_CAST)
    assert "pl.cast(n, pl.INDEX)" in text
    x = torch.randn(4, 16)
    want = torch.zeros(4, 16)
    want[2] = x[2]
    got = run_torch_ref(fn, x, 2, torch.zeros(4, 16))
    got = got[0] if isinstance(got, (tuple, list)) else got
    assert torch.equal(got, want)


def test_cast_of_a_scalar_rejects_other_modes():
    with pytest.raises(pl.ParserTypeError, match="takes only mode .round."):
        src = SCALAR_CAST.replace("target_type=pl.INDEX", "pl.INDEX, mode='floor'")
        pl.parse("import plang as pl\n" + src)


def test_constant_arithmetic_is_kept_through_the_printer():
    fn, text = round_trip('''
@pl.function(type=pl.FunctionType.InCore)
def k(out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
    off0: pl.Scalar[pl.INDEX] = pl.const(0, pl.INDEX) * pl.const(16, pl.INDEX)
    t = pl.tile.full([16, 64], dtype=pl.FP32, value=1.0)
    o = pl.tile.store(t, [off0, 0], out)
    return o
''')
    assert "pl.const(0, pl.INDEX) * 16" in text


def test_tile_create_layout_hints_and_move_targets():
    prog, text = round_trip('''
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    t = pl.tile.create([16, 128], dtype=pl.BF16, target_memory=pl.Mem.Mat, transpose=True)
    u = pl.tile.create([16, 128], dtype=pl.BF16, target_memory=pl.Mem.Mat, flat_layout=True)
    v = pl.tile.move(t, target_memory=pl.Mem.Bias)
    w = pl.tile.move(u, target_memory=pl.Mem.Acc)
    return a
''')
    assert "transpose=True" in text and "flat_layout=True" in text
    assert "pl.MemorySpace.Bias" in text and "pl.MemorySpace.Acc" in text


@pytest.mark.parametrize("kw, msg", [
    ("transpose=1", "takes True or False"),
    ("transpose=True, flat_layout=True", "mutually exclusive"),
])
def test_tile_create_layout_hint_errors(kw, msg):
    with pytest.raises(pl.ParserError, match=msg):
        pl.parse(f'''import plang as pl
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    t = pl.tile.create([16, 128], dtype=pl.BF16, target_memory=pl.Mem.Mat, {kw})
    return a
''')


def test_tile_create_with_a_layout_hint_compiles_as_a_plain_tile():
    fn, _ = round_trip('''
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[8, 16], pl.FP32],
      out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
    z = pl.tile.create([8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec, transpose=False)
    t = pl.tile.load(a, [0, 0], [8, 16])
    r = pl.tile.add(t, t)
    o = pl.tile.store(r, [0, 0], out)
    o2 = pl.tile.store(z, [0, 0], o, shapes=[0, 0])
    return o
''')
    x = torch.randn(8, 16)
    got = run_torch_ref(fn, x, torch.zeros(8, 16))
    got = got[0] if isinstance(got, (tuple, list)) else got
    assert torch.equal(got, 2 * x)
    out = torch.zeros(8, 16)
    compile_kernel(fn)(x, out)
    assert torch.equal(out, 2 * x)


@pl.jit.incore
def row_into_3d(a: pl.Tensor, out: pl.InOut[pl.Tensor]):
    t = pl.load(a, [0, 0], [1, 16])
    return pl.store(pl.mul(t, t), [1, 2, 0], out)  # a [1, 16] tile fills out[1, 2, :]


@pl.jit
def store_lower_rank(a: pl.Tensor, out: pl.InOut[pl.Tensor]):
    return row_into_3d(a, out)


@pl.jit
def assemble_lower_rank(x: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 4, 16], pl.BF16]]):
    for b in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.add(x, float(1))
            out = pl.assemble(out, y, [b, 0, 0])  # [4, 16] FP32 into out[b] (BF16)
    return out


def test_a_lower_rank_tile_or_tensor_fills_the_trailing_dims():
    a, out = torch.randn(4, 16), torch.zeros(2, 4, 16)
    store_lower_rank(a, out)
    want = torch.zeros(2, 4, 16)
    want[1, 2] = a[0] * a[0]
    assert torch.equal(out, want)
    x, out = torch.randn(4, 16), torch.zeros(2, 4, 16, dtype=torch.bfloat16)
    assemble_lower_rank(x, out)
    assert torch.equal(out, (x + 1).to(torch.bfloat16).expand(2, 4, 16))


@pl.jit
def subs_float_from_int(src: pl.Tensor[[8, 32], pl.INT16], out: pl.Out[pl.Tensor[[8, 32], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.tensor.subs(src, pl.const(2.75, pl.FP32))  # the scalar converts to INT16 (-> 2)
        out = pl.assemble(out, r, [0, 0])
    return out


def test_subs_converts_a_float_scalar_to_an_integer_operand():
    src = torch.arange(-128, 128, dtype=torch.int16).reshape(8, 32)
    out = torch.zeros(8, 32, dtype=torch.int16)
    subs_float_from_int(src, out)
    assert torch.equal(out, src - torch.tensor(2.75).to(torch.int16))
