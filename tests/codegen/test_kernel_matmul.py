"""The matmul family through the register-blocked micro-kernels vs torch in float64.

Tolerances: FP32 operands rtol/atol 1e-4 (K <= 96, fp32 accumulation in a different order);
FP16 / BF16 operands are exact in FP32, so the same tolerance applies; INT8 is exact (INT32
accumulation). Shapes cover row counts that are not multiples of the 6-row block and column
counts narrower than the 64-column block.
"""

from __future__ import annotations

import pytest
import torch

from plang.codegen.kernel import KernelCompileError, compile_kernel, isa, lower_matmul
from plang.dtypes import BF16, BOOL, FP32, INT32, DataType
from plang.ir import FunctionType, ParamDirection, ScalarType, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.enums import MemorySpace
from plang.ir.ops import make_call
from plang.target import Device, Isa, runnable_levels


def _kernel(op: str, d: DataType, m: int, n: int, k: int, device: Device | None = None):
    acc_d = INT32 if d.name == "INT8" else FP32
    b = IRBuilder()
    with b.function(op, type=FunctionType.AIC) as f:
        a = f.param("a", TensorType([m, k], d))
        bb = f.param("b", TensorType([k, n], d))
        extra = f.param("c0", TensorType([m if op != "matmul_bias" else 1, n], acc_d))
        flag = f.param("fresh", ScalarType(BOOL))
        out = f.param("out", TensorType([m, n], acc_d), ParamDirection.Out)
        at = b.let("at", make_call("tile.load", [a, [0, 0], [m, k]]))
        bt = b.let("bt", make_call("tile.load", [bb, [0, 0], [k, n]]))
        ct = b.let("ct", make_call("tile.load", [extra, [0, 0], [m if op != "matmul_bias" else 1, n]]))
        if op == "matmul":
            r = make_call("tile.matmul", [at, bt])
        elif op == "matmul_bias":
            r = make_call("tile.matmul_bias", [at, bt, ct])
        else:
            r = make_call("tile.matmul_acc", [ct, at, bt], {"init_cond": flag})
        rv = b.let("r", r)
        b.eval(make_call("tile.store", [rv, [0, 0], out]))
    return compile_kernel(f.function, device)


def _operands(d: DataType, m: int, n: int, k: int):
    if d.name == "INT8":
        return (torch.randint(-128, 128, (m, k), dtype=torch.int8),
                torch.randint(-128, 128, (k, n), dtype=torch.int8))
    return torch.randn(m, k).to(d.to_torch()), torch.randn(k, n).to(d.to_torch())


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT8"])
@pytest.mark.parametrize("shape", [(13, 80, 96), (6, 16, 7), (1, 130, 33), (20, 48, 64), (3, 64, 32)])
@pytest.mark.parametrize("op", ["matmul", "matmul_acc", "matmul_bias"])
def test_matmul(op: str, shape: tuple[int, int, int], dtype: str) -> None:
    d = DataType.from_name(dtype)
    m, n, k = shape
    kern = _kernel(op, d, m, n, k)
    a, b = _operands(d, m, n, k)
    acc_t = torch.int32 if dtype == "INT8" else torch.float32
    c0 = torch.randint(-50, 50, (1 if op == "matmul_bias" else m, n)).to(acc_t)
    for fresh in (False, True):
        out = torch.zeros(m, n, dtype=acc_t)
        kern(a, b, c0, fresh, out)
        want = a.double() @ b.double()
        if op == "matmul_bias" or (op == "matmul_acc" and not fresh):
            want = want + c0.double()
        if dtype == "INT8":
            assert torch.equal(out, want.to(torch.int32))
        else:
            torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT8"])
@pytest.mark.parametrize("level", runnable_levels())
def test_matmul_acc_at_every_level(level: str, dtype: str) -> None:
    """Each level's register block (6x64, 6x16, 3x16) and operand path (BF16 pair dot only
    with AVX512-BF16), with partial row and column blocks."""
    d = DataType.from_name(dtype)
    m, n, k = 22, 96, 40
    kern = _kernel("matmul_acc", d, m, n, k, Device(isa=level))
    a, b = _operands(d, m, n, k)
    acc_t = torch.int32 if dtype == "INT8" else torch.float32
    c0 = torch.randint(-50, 50, (m, n)).to(acc_t)
    out = torch.zeros(m, n, dtype=acc_t)
    kern(a, b, c0, False, out)
    want = a.double() @ b.double() + c0.double()
    if dtype == "INT8":
        assert torch.equal(out, want.to(torch.int32))
    else:
        torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)


def test_narrow_output_is_a_clear_error() -> None:
    with pytest.raises(KernelCompileError, match="narrower than 16 columns"):
        _kernel("matmul", FP32, 4, 8, 8)


def test_gemv_acc() -> None:
    b = IRBuilder()
    with b.function("gemv", type=FunctionType.AIC) as f:
        x = f.param("x", TensorType([1, 40], FP32))
        w = f.param("w", TensorType([40, 48], FP32))
        out = f.param("out", TensorType([1, 48], FP32), ParamDirection.Out)
        xt = b.let("xt", make_call("tile.load", [x, [0, 0], [1, 40]]))
        wt = b.let("wt", make_call("tile.load", [w, [0, 0], [40, 48]]))
        g = b.let("g", make_call("tile.gemv", [xt, wt]))
        r = b.let("r", make_call("tile.gemv_acc", [g, xt, wt]))
        b.eval(make_call("tile.store", [r, [0, 0], out]))
    k = compile_kernel(f.function)
    x, wm = torch.randn(1, 40), torch.randn(40, 48)
    out = torch.zeros(1, 48)
    k(x, wm, out)
    # 80 fp32 products summed: the rounding error is bounded by 80 * 2^-24 * sum |x * w|, not
    # by the (possibly cancelling) result, so compare to float64 normalised by that sum
    mag = 2 * (x.double().abs() @ wm.double().abs())
    want = 2 * (x.double() @ wm.double())
    torch.testing.assert_close(out.double() / mag, want / mag, rtol=0, atol=80 * 2.0 ** -24)



def _matmul_of_loaded_b(m: int, n: int, k: int, via: str):
    b = IRBuilder()
    with b.function("mm_moved", type=FunctionType.AIC) as f:
        a = f.param("a", TensorType([m, k], FP32))
        bb = f.param("b", TensorType([1, k, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), ParamDirection.Out)
        at = b.let("at", make_call("tile.load", [a, [0, 0], [m, k]]))
        bt = make_call("tile.reshape", [make_call("tile.load", [bb, [0, 0, 0], [1, k, n]]), [k, n]])
        if via == "move":
            bt = make_call("tile.move", [bt], {"target_memory": MemorySpace.Right})
        rv = b.let("r", make_call("tile.matmul", [at, b.let("bt", bt)]))
        b.eval(make_call("tile.store", [rv, [0, 0], out]))
    return compile_kernel(f.function)


def test_b_reshaped_and_moved_stays_a_prefetched_ddr_read() -> None:
    """The JIT's passes reshape a loaded [1, K, N] B tile to [K, N] and move it into Right
    before the matmul: neither is a copy of a still-deferred load, so B keeps its row-ahead
    DDR prefetch (an FP32 1024^3 GEMM operator walking row strips: 66-75 -> 83-92 GFLOP/s)."""
    m, n, k = 12, 64, 32
    kernels = {via: _matmul_of_loaded_b(m, n, k, via) for via in ("reshape", "move")}
    b = IRBuilder()
    with b.function("mm_direct", type=FunctionType.AIC) as f:
        a = f.param("a", TensorType([m, k], FP32))
        bb = f.param("b", TensorType([k, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), ParamDirection.Out)
        at = b.let("at", make_call("tile.load", [a, [0, 0], [m, k]]))
        bt = b.let("bt", make_call("tile.load", [bb, [0, 0], [k, n]]))
        b.eval(make_call("tile.store", [b.let("r", make_call("tile.matmul", [at, bt])), [0, 0], out]))
    direct = compile_kernel(f.function).mlir_text.count("memref.prefetch")
    x, y = torch.randn(m, k), torch.randn(1, k, n)
    for via, kern in kernels.items():
        assert kern.mlir_text.count("memref.prefetch") == direct, via
        got = torch.empty(m, n)
        kern(x, y, got)
        torch.testing.assert_close(got.double(), x.double() @ y[0].double(), rtol=1e-4, atol=1e-4)


AMX = "x86-64-v4" in runnable_levels() and Isa.parse("x86-64-v4").amx_bf16
needs_amx = pytest.mark.skipif(not AMX, reason="this host has no AMX-BF16 tiles (or the OS refuses them)")


@needs_amx
@pytest.mark.parametrize("op", ["matmul", "matmul_acc", "matmul_bias"])
@pytest.mark.parametrize("shape", [(32, 64, 64), (48, 80, 96), (16, 128, 1056)])
def test_bf16_matmul_on_amx_tiles(op: str, shape: tuple[int, int, int]) -> None:
    """BF16 on AMX tiles: 2x2-tile blocks with 16-row / 16-column edges, k in unrolled runs
    (1056 = 33 steps of 32: a first run, a looped run and a remainder), every start (zero,
    bias, accumulator, init_cond); against float64 and against the same kernel without AMX."""
    m, n, k = shape
    kern = _kernel(op, BF16, m, n, k, Device(isa="x86-64-v4"))
    plain = _kernel(op, BF16, m, n, k, Device(isa="x86-64-v4,-amx-bf16"))
    assert "x86.amx.tile_mulf" in kern.mlir_text and "x86.amx" not in plain.mlir_text
    a, b = _operands(BF16, m, n, k)
    c0 = torch.randint(-50, 50, (1 if op == "matmul_bias" else m, n)).float()
    for fresh in (False, True):
        out, ref = torch.zeros(m, n), torch.zeros(m, n)
        kern(a, b, c0, fresh, out)
        plain(a, b, c0, fresh, ref)
        want = a.double() @ b.double()
        if op == "matmul_bias" or (op == "matmul_acc" and not fresh):
            want = want + c0.double()
        torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-3)
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-3)


def test_a_moved_from_a_computed_tile_is_read_in_place(monkeypatch) -> None:
    """A tile computed in the kernel and still read afterwards (here stored too) is moved
    into Left before the matmul: the fused move passes the tile's buffer through, so the
    micro-kernel broadcasts from it instead of from a copy (8x512x512x64 fp32 attention on a
    Zen 1 core, whose probabilities take this path: 20.7-22.8 -> 19.1 ms)."""
    m, n, k = 12, 64, 32
    seen = []
    init = lower_matmul._Operands.__init__

    def spy(self, kb, a, *rest):
        seen.append(type(a).__name__)
        init(self, kb, a, *rest)
    monkeypatch.setattr(lower_matmul._Operands, "__init__", spy)
    b = IRBuilder()
    with b.function("mm_computed_a", type=FunctionType.AIC) as f:
        a = f.param("a", TensorType([m, k], FP32))
        bb = f.param("b", TensorType([k, n], FP32))
        e_out = f.param("e_out", TensorType([m, k], FP32), ParamDirection.Out)
        out = f.param("out", TensorType([m, n], FP32), ParamDirection.Out)
        e = b.let("e", make_call("tile.exp", [make_call("tile.load", [a, [0, 0], [m, k]])]))
        bt = b.let("bt", make_call("tile.load", [bb, [0, 0], [k, n]]))
        left = make_call("tile.move", [e], {"target_memory": MemorySpace.Left})
        rv = b.let("r", make_call("tile.matmul", [left, bt]))
        b.eval(make_call("tile.store", [rv, [0, 0], out]))
        b.eval(make_call("tile.store", [e, [0, 0], e_out]))
    kern = compile_kernel(f.function)
    assert seen == ["TileBuf"]
    x, y = torch.randn(m, k), torch.randn(k, n)
    got_e, got = torch.empty(m, k), torch.empty(m, n)
    kern(x, y, got_e, got)
    torch.testing.assert_close(got_e, torch.exp(x))
    torch.testing.assert_close(got.double(), torch.exp(x.double()) @ y.double(), rtol=1e-4, atol=1e-4)


def test_the_rows_past_the_last_block_share_two_even_blocks(monkeypatch) -> None:
    """5 MR + 2 rows run as whole blocks and two of (MR + 2) / 2 rows, not a 2-row block whose
    few accumulators leave the FMA latency exposed; fewer rows than MR stay one block."""
    with isa.using(Isa.default()):
        mr = isa.matmul_block()[0]
    seen = []
    block = lower_matmul._block

    def spy(kb, ops, out, m0, n0, rows, *rest, **kw):
        seen.append(rows)
        block(kb, ops, out, m0, n0, rows, *rest, **kw)
    monkeypatch.setattr(lower_matmul, "_block", spy)
    for m, blocks in ((5 * mr + 2, [mr, (mr + 2) // 2, (mr + 3) // 2]), (mr - 2, [mr - 2])):
        seen.clear()
        kern = _kernel("matmul", FP32, m, 32, 40)
        assert seen == blocks, (m, seen)
        a, b = _operands(FP32, m, 32, 40)
        out = torch.zeros(m, 32)
        kern(a, b, torch.zeros(m, 32), True, out)
        torch.testing.assert_close(out.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)
