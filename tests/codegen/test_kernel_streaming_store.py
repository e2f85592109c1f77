"""Non-temporal stores (`KernelBuilder.streaming_store`): stores into a DDR tensor at least
3/4 of the last-level cache (1/4 when the kernel's tensors together fill 3/4) bypass the
cache, whole 64-byte aligned chunks with aligned non-temporal stores, the rest (unaligned
views, partial chunks) as before, and the kernel ends with a store fence. The cache size is
set small here so small tensors take that path; results must equal torch exactly (tile.add
/ tile.store move values unchanged)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from plang.codegen.kernel import compile_kernel
from plang.dtypes import DataType
from plang.ir import FunctionType, ParamDirection, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call
from plang.target import Device, Isa


def _add_kernel(d: DataType, m: int, n: int, rows: int, cols: int, llc_bytes: int):
    """An add kernel compiled for the default ISA with a last-level cache of `llc_bytes`."""
    b = IRBuilder()
    with b.function("stream_add", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], d))
        y = f.param("y", TensorType([m, n], d))
        out = f.param("out", TensorType([m, n], d), ParamDirection.Out)
        with b.for_range("i", 0, m, rows) as li:
            with b.for_range("j", 0, n, cols) as lj:
                at = [li.var, lj.var]
                xt = b.let("xt", make_call("tile.load", [x, at, [rows, cols]]))
                yt = b.let("yt", make_call("tile.load", [y, at, [rows, cols]]))
                b.eval(make_call("tile.store", [b.let("s", make_call("tile.add", [xt, yt])), at, out]))
    return compile_kernel(f.function, Device(isa=dataclasses.replace(Isa.default(), llc_bytes=llc_bytes)))


@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
@pytest.mark.parametrize("shift", [0, 1, 16])
def test_nontemporal_stores_match_torch(dtype: str, shift: int) -> None:
    """out is a view `shift` elements into a larger buffer (shift 1: no chunk is 64-byte
    aligned; 0 and 16: whole chunks of the first row are); 300 columns leave a partial
    last chunk (chunks of 64 fp32 / 128 fp16)."""
    d = DataType.from_name(dtype)
    m, n = 12, 300
    k = _add_kernel(d, m, n, 4, n, llc_bytes=4096)
    assert "nontemporal = true" in k.mlir_text
    assert ("sfence" in k.mlir_text) == (Isa.default().arch == "x86_64")
    td = d.to_torch()
    x, y = torch.randn(m, n).to(td), torch.randn(m, n).to(td)
    backing = torch.full((m, n + 32), 7.0).to(td)
    out = backing[:, shift:shift + n]
    k(x, y, out)
    assert torch.equal(out, x + y)
    assert torch.all(backing[:, :shift] == 7) and torch.all(backing[:, shift + n:] == 7)


def test_small_tensors_keep_cached_stores() -> None:
    k = _add_kernel(DataType.from_name("FP32"), 8, 64, 4, 64, llc_bytes=1 << 30)
    assert "nontemporal" not in k.mlir_text and "sfence" not in k.mlir_text


@pytest.mark.parametrize("llc_bytes, streams", [(48_000, True), (64_000, False)])
def test_an_output_of_a_quarter_of_the_cache_streams_when_the_kernel_fills_it(llc_bytes: int,
                                                                             streams: bool) -> None:
    """out is 14 400 bytes, the three tensors 43 200: with a 48 000-byte cache they fill 3/4
    of it, so out (>= 1/4) streams; with 64 000 bytes they do not, and out (< 3/4) is cached."""
    k = _add_kernel(DataType.from_name("FP32"), 12, 300, 4, 300, llc_bytes=llc_bytes)
    assert ("nontemporal = true" in k.mlir_text) is streams
    x, y, out = torch.randn(12, 300), torch.randn(12, 300), torch.empty(12, 300)
    k(x, y, out)
    assert torch.equal(out, x + y)
