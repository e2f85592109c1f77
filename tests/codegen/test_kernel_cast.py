"""`tile.cast` between every pair of FP32, FP16, BF16, INT8, INT16, INT32, UINT8, BOOL with every
rounding mode and both saturation modes, checked exactly against the torch reference rules
(`plang.codegen.torch_ref_lib.cast`), including NaN, ±inf, ties and out-of-range values."""

from __future__ import annotations

import pytest
import torch
from _kernel_util import tile_kernel

from plang.codegen.torch_ref_lib import cast as ref_cast
from plang.dtypes import DataType
from plang.ir.ops import make_call

DTYPES = ("FP32", "FP16", "BF16", "INT8", "INT16", "INT32", "UINT8", "BOOL")
MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
SHAPE = (3, 70)


def _source(d: DataType) -> torch.Tensor:
    g = torch.Generator().manual_seed(7)
    if d.is_float:
        x = (torch.randn(SHAPE, generator=g, dtype=torch.float64) * 300)
        x[0, :12] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.5, -0.5, 1.5, 2.5, -2.5,
                                  1e30, -1e30, 1e-30, 70000.0], dtype=torch.float64)
        return x.to(d.to_torch())
    if d.name == "BOOL":
        return torch.rand(SHAPE, generator=g) < 0.5
    info = torch.iinfo(d.to_torch())
    return torch.randint(info.min, info.max + 1, SHAPE, generator=g, dtype=torch.int64).to(d.to_torch())


def _run(src: DataType, dst: DataType, mode: str, sat: str | None) -> None:
    kw = {"target_type": dst, "mode": mode}
    if sat is not None:
        kw["saturation_mode"] = sat
    k = tile_kernel("cast", [src], dst, SHAPE, SHAPE, (0, 0),
                    lambda b, t: make_call("tile.cast", [t[0]], kw))
    x = _source(src)
    out = torch.zeros(SHAPE, dtype=dst.to_torch())
    k(x, out)
    want = ref_cast(x, dst.to_torch(), mode, sat)
    if dst.is_float:
        assert torch.equal(out.isnan(), want.isnan())
        assert torch.equal(out[~out.isnan()], want[~want.isnan()]), (out, want)
    else:
        assert torch.equal(out, want), (x, out, want)


@pytest.mark.parametrize("dst", DTYPES)
@pytest.mark.parametrize("src", DTYPES)
def test_cast_pairs(src: str, dst: str) -> None:
    _run(DataType.from_name(src), DataType.from_name(dst), "round", None)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pair", [("FP32", "INT8"), ("FP32", "INT32"), ("FP16", "INT16"),
                                  ("FP32", "FP16"), ("FP32", "BF16"), ("BF16", "FP16")])
def test_cast_modes(pair: tuple[str, str], mode: str) -> None:
    _run(DataType.from_name(pair[0]), DataType.from_name(pair[1]), mode, None)


@pytest.mark.parametrize("sat", ["on", "off"])
@pytest.mark.parametrize("pair", [("FP32", "INT8"), ("INT32", "INT8"), ("INT16", "UINT8"),
                                  ("FP32", "FP16"), ("FP32", "UINT8")])
def test_cast_saturation(pair: tuple[str, str], sat: str) -> None:
    _run(DataType.from_name(pair[0]), DataType.from_name(pair[1]), "trunc", sat)


def _bf16_rne(bits: torch.Tensor) -> torch.Tensor:
    """FP32 bit patterns (int64) rounded to BF16 bit patterns, to nearest even, by integers."""
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def test_fp32_to_bf16_rounds_every_kind_of_value() -> None:
    """Rows of 256: random bit patterns of every exponent, normal values at and beside ties,
    denormals only (`vcvtneps2bf16` would read them as zero, so their vectors take the integer
    rounding), and specials (signed zeros, infinities, NaNs, values rounding up to inf),
    against integer round-to-nearest-even, bit for bit (NaN stays NaN)."""
    g = torch.Generator().manual_seed(3)
    bits = torch.randint(0, 1 << 32, (4, 256), generator=g, dtype=torch.int64)
    ties = torch.tensor([0x7FFF, 0x8000, 0x8001, 0x18000])
    bits[1] = (torch.randint(0x00800000, 0x7F000000, (256,), generator=g) & ~0xFFFF) + ties.repeat(64)
    bits[2] = torch.randint(1, 0x00800000, (256,), generator=g) | (torch.arange(256) % 2 << 31)
    specials = [0, 1 << 31, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x7F7FFFFF,
                0x7F7F8000, 0x007FFFFF, 0x00800000, 0x80000001]
    bits[3, :len(specials)] = torch.tensor(specials)
    x = torch.from_numpy(bits.to(torch.int32).numpy().view("float32").copy())
    fp32, bf16 = DataType.from_name("FP32"), DataType.from_name("BF16")
    k = tile_kernel("to_bf16", [fp32], bf16, (4, 256), (4, 256), (0, 0),
                    lambda b, t: make_call("tile.cast", [t[0]], {"target_type": bf16}))
    out = torch.zeros(4, 256, dtype=torch.bfloat16)
    k(x, out)
    got = out.view(torch.int16).to(torch.int64) & 0xFFFF
    nan = x.isnan()
    assert torch.equal(out.isnan(), nan)
    assert torch.equal(got[~nan], _bf16_rne(bits)[~nan])
