"""The ready operators against torch: row softmax, RMSNorm, LayerNorm (with and without the
affine operands), GEMM (fp32 / bf16 / fp16, row- and column-major b), fused attention."""

import pytest
import torch

import plang as pl
from plang.dtypes import DataType
from plang.operators import Unresolvable
from plang.operators.kernels import GEMM, Attention, LayerNorm, RMSNorm, RowSoftmax
from plang.runtime import RunConfig
from plang.target import KIB, Device

DEV = Device(clusters=2)
CONFIG = RunConfig(device=DEV)


def test_row_softmax():
    op = RowSoftmax(M=256, N=512)
    assert repr(op) == "RowSoftmax(M=256, N=512, rows=None, blocks=None)"
    done = op.resolved(DEV)
    assert repr(done) == "RowSoftmax(M=256, N=512, rows=32, blocks=2)"
    assert done.array_key() == (RowSoftmax, ("device", "cpu-2x1c2v"), ("N", 512), ("rows", 32), ("blocks", 2))
    x = torch.randn(256, 512) * 3
    torch.testing.assert_close(done(x, config=CONFIG), torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    y = RowSoftmax.call(torch.randn(128, 512), config=CONFIG)
    assert y.shape == (128, 512)


def test_row_softmax_too_wide_for_the_vector_buffer():
    tiny = Device(clusters=2, capacities={pl.Mem.Vec: 16 * KIB})
    with pytest.raises(Unresolvable, match="no row block of 4096 columns fits the 16 KiB vector buffer"):
        RowSoftmax(M=64, N=4096).resolved(tiny)
    with pytest.raises(ValueError, match="M=96 is not a multiple of rows\\*blocks=64\\*2"):
        RowSoftmax(M=96, N=64, rows=64, blocks=2).resolved(DEV)


def test_rms_norm():
    x, w = torch.randn(128, 256), torch.randn(256)
    got = RMSNorm.call(x, w, config=CONFIG)
    torch.testing.assert_close(got, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine):
    x, w, b = torch.randn(128, 256), torch.randn(256), torch.randn(256)
    args = (x, w, b) if affine else (x,)
    got = LayerNorm.call(*args, affine=affine, config=CONFIG)
    expected = torch.nn.functional.layer_norm(x, (256,), w if affine else None, b if affine else None)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("col_major", [False, True])
def test_gemm(dtype, col_major):
    a, b = torch.randn(128, 256).to(dtype), torch.randn(256, 192).to(dtype)
    given = b.T.contiguous() if col_major else b
    got = GEMM.call(a, given, dtype=DataType.from_torch(dtype), b_col_maj=col_major, config=CONFIG)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, a.float() @ b.float(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("walk", ["columns", "rows"])
def test_gemm_walks(walk):
    a, b = torch.randn(128, 128).to(torch.bfloat16), torch.randn(128, 256).to(torch.bfloat16)
    op = GEMM(M=128, N=256, K=128, dtype=pl.BF16, tm=32, tn=64, tk=64, blocks=2, walk=walk)
    torch.testing.assert_close(op(a, b, config=CONFIG), a.float() @ b.float(), rtol=2e-3, atol=2e-3)
    assert GEMM(M=64, N=64, K=64, dtype=pl.BF16).resolved(DEV).walk == "columns"
    assert GEMM(M=64, N=64, K=64, walk="rows").resolved(DEV).walk == "rows"


@pytest.mark.parametrize("dtype, col_major, isa, tiles", [
    (pl.FP32, False, "x86-64-v3", (64, 64, 1024)),  # b's strips 256 bytes wide, the deepest K in Mat
    (pl.BF16, False, "x86-64-v4", (64, 128, 1024)),  # (the pair dot packs BF16 pairs)
    (pl.BF16, True, "x86-64-v4", (64, 128, 512)),  # its transposed tile must fit Vec too
    (pl.BF16, False, "x86-64-v3", (64, 256, 256)),  # b converted to FP32 as it is packed
    (pl.FP16, False, "x86-64-v4", (64, 256, 256)),
])
def test_gemm_resolves_deep_k_tiles(dtype, col_major, isa, tiles):
    op = GEMM(M=1024, N=1024, K=1024, dtype=dtype, b_col_maj=col_major).resolved(Device(clusters=2, isa=isa))
    assert (op.tm, op.tn, op.tk) == tiles
    small = GEMM(M=64, N=96, K=48).resolved(DEV)
    assert (small.tm, small.tn, small.tk) == (32, 32, 16)


def test_gemm_checks():
    with pytest.raises(ValueError, match="GEMM: walk='diagonal' is none of 'columns', 'rows'"):
        GEMM(M=64, N=64, K=64, walk="diagonal")
    with pytest.raises(ValueError, match="GEMM: dtype=pl.INT8 is none of FP32, BF16, FP16"):
        GEMM(M=64, N=64, K=64, dtype=pl.INT8)
    with pytest.raises(ValueError, match="must divide M=64, N=64, K=64"):
        GEMM(M=64, N=64, K=64, tn=128).resolved(DEV)
    with pytest.raises(TypeError, match="operand a is FP32, got a torch.bfloat16 tensor"):
        GEMM(M=64, N=64, K=64)(torch.zeros(64, 64, dtype=torch.bfloat16), torch.zeros(64, 64), config=CONFIG)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_attention(dtype):
    q, k, v = (torch.randn(2, n, 64).to(dtype) for n in (128, 256, 256))
    op = Attention(H=2, S=128, L=256, D=64, dtype=DataType.from_torch(dtype))
    assert op.scale == 0.125
    expected = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    torch.testing.assert_close(op(q, k, v, config=CONFIG), expected, rtol=2e-2, atol=2e-2)


def test_attention_blocks_that_split_a_head():
    """3 heads of 2 query blocks over 2 SPMD blocks: each block walks its pairs head by
    head, one head's query blocks split between the two."""
    q, k, v = (torch.randn(3, 128, 64) for _ in range(3))
    op = Attention(H=3, S=128, L=128, D=64, qr=64, kv=64, blocks=2)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(op(q, k, v, config=CONFIG), expected, rtol=2e-2, atol=2e-2)
