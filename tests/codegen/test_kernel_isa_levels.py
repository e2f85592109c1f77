"""Kernels for every ISA level this host runs: the code uses only that level's registers
(checked in the disassembly of the kernel function), calls no helper or libm function on
the paths that have inline forms, and computes the same results."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import torch
from _kernel_util import rand, tile_kernel

from plang.codegen.kernel import compile_kernel as compile_for_default
from plang.dtypes import BF16, FP32, DataType
from plang.ir.ops import make_call
from plang.target import Device, runnable_levels

LEVELS = runnable_levels()
_WIDEST = {"x86-64": "xmm", "x86-64-v2": "xmm", "x86-64-v3": "ymm", "x86-64-v4": "zmm"}

pytestmark = pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump")


def _compile_at(monkeypatch, level: str):
    import _kernel_util

    device = Device(isa=level)
    monkeypatch.setattr(_kernel_util, "compile_kernel", lambda f: compile_for_default(f, device))


def _kernel_asm(kernel, tmp_path, name: str = "k") -> str:
    """Disassembly of the kernel function itself (not its C-interface wrappers)."""
    path = str(tmp_path / "k.so")
    kernel.save(path)
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True, text=True,
                         check=True).stdout
    body = re.search(rf"^[0-9a-f]+ <{name}>:\n(.*?)(?:\n\n|\Z)", asm, re.S | re.M)
    assert body, f"no function {name} in the kernel library"
    return body.group(1)


def _exp(b, t):
    return make_call("tile.exp", [t[0]])


def _cast_to(d: DataType):
    return lambda b, t: make_call("tile.cast", [t[0]], {"target_type": d})


def _registers(asm: str) -> set[str]:
    return set(re.findall(r"%([xyz]mm)\d+", asm))


_ALLOWED = {"x86-64": {"xmm"}, "x86-64-v2": {"xmm"}, "x86-64-v3": {"xmm", "ymm"}}


@pytest.mark.parametrize("level", [lv for lv in LEVELS if lv in _ALLOWED])
def test_the_packed_entry_point_uses_only_the_level(monkeypatch, tmp_path, level: str) -> None:
    """The entry point the runtime calls copies the memref descriptors of the kernel's tensors
    for its C interface: that too is code for the level. (The JIT's own packed wrappers are
    compiled for the host: on an AVX-512 host such a copy used zmm moves, an illegal
    instruction on an AVX2 CPU.)"""
    _compile_at(monkeypatch, level)
    k = tile_kernel("k", [FP32, FP32], FP32, [8, 256], [8, 256], [0, 0],
                    lambda b, t: make_call("tile.add", [t[0], t[1]]))
    regs = _registers(_kernel_asm(k, tmp_path, name="plang_entry_k"))
    assert regs <= _ALLOWED[level], f"{level} entry point uses {regs - _ALLOWED[level]}"


_MACROS = {"x86-64": ("__SSE2__", "__SSE4_2__"), "x86-64-v2": ("__SSE4_2__", "__AVX__"),
           "x86-64-v3": ("__AVX2__ && __FMA__", "__AVX512F__"), "x86-64-v4": ("__AVX512F__", "0")}


@pytest.mark.parametrize("level", [lv for lv in LEVELS if lv in _MACROS])
def test_an_external_c_kernel_is_built_for_the_level(tmp_path, level: str) -> None:
    """A C kernel is compiled for the device's level, not for the host (`-march=native` had
    built AVX-512 code for an x86-64-v3 device on an AVX-512 host): the compiler's own
    feature macros say which instructions it may use."""
    from plang.ir import FunctionType, IRBuilder, ParamDirection, TensorType

    has, lacks = _MACROS[level]
    src = tmp_path / "ones.c"
    src.write_text(f"""#include "plang_kernel.h"
#if !({has}) || {lacks}
#error "not built for {level}"
#endif
void ones(void **args) {{
  plang_memref *o = PLANG_TENSOR_ARG(args, 0);
  for (int64_t i = 0; i < PLANG_SIZE(o, 1, 0); i++) PLANG_DATA(float, o)[i] = 1.0f;
}}
""")
    b = IRBuilder()
    with b.function("ones", type=FunctionType.AIV) as f:
        f.param("out", TensorType([40], FP32), ParamDirection.Out)
    k = compile_for_default(f.function, Device(isa=level), external_source=str(src))
    out = torch.zeros(40)
    k(out)
    assert torch.equal(out, torch.ones(40))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16"])
def test_exp_uses_the_level_and_no_calls(monkeypatch, tmp_path, level: str, dtype: str) -> None:
    _compile_at(monkeypatch, level)
    d = DataType.from_name(dtype)
    k = tile_kernel("k", [d], d, [8, 256], [8, 256], [0, 0], _exp)
    asm = _kernel_asm(k, tmp_path)
    regs = _registers(asm)
    if level in _WIDEST:
        assert _WIDEST[level] in regs, regs
        allowed = _ALLOWED.get(level)
        assert allowed is None or regs <= allowed, f"{level} kernel uses {regs - allowed}"
    if dtype != "BF16" or level == "x86-64-v4":
        # (below AVX-512, LLVM scalarizes BF16 masked loads of partial chunks through the
        # conversion helper plang links in; FP32 / FP16 and every whole-chunk path are inline)
        assert "call" not in asm, [ln for ln in asm.splitlines() if "call" in ln]
    x = rand([8, 256], d, -10.0, 10.0)
    out = torch.empty_like(x)
    k(x, out)
    rel = {"FP32": 4e-7, "FP16": 2 ** -11, "BF16": 2 ** -8}[dtype]  # half an ulp after rounding
    torch.testing.assert_close(out.float(), torch.exp(x.float()), rtol=rel, atol=2.0 ** -25)  # subnormals


@pytest.mark.parametrize("level", LEVELS)
def test_half_conversions_round_to_nearest_even_at_every_level(monkeypatch, level: str) -> None:
    """FP32 -> FP16 / BF16 and back with hardware or the inline integer forms: bit-exact
    against torch, including ties, subnormals, overflow to inf, inf and NaN."""
    _compile_at(monkeypatch, level)
    inf = float("inf")
    special = torch.tensor([0.0, -0.0, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 65519.0, 65520.0, 1e6, -1e6,
                            2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -14 - 2 ** -25, inf, -inf,
                            1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 3.4e38, 1e-40, -1e-39, 5.9e-39])
    x = torch.cat([special, torch.randn(1024 - special.numel()) * 100]).reshape(4, 256)
    for dtype in ("FP16", "BF16"):
        d = DataType.from_name(dtype)
        k = tile_kernel("k", [FP32], d, [4, 256], [4, 256], [0, 0], _cast_to(d))
        out = torch.empty(4, 256, dtype=d.to_torch())
        k(x, out)
        assert torch.equal(out.view(torch.int16), x.to(d.to_torch()).view(torch.int16)), dtype
        back = tile_kernel("k", [d], FP32, [4, 256], [4, 256], [0, 0], _cast_to(FP32))
        wide = torch.empty(4, 256)
        back(out, wide)
        assert torch.equal(wide, out.float()), dtype
    nan = torch.full((4, 256), float("nan"))
    k = tile_kernel("k", [FP32], BF16, [4, 256], [4, 256], [0, 0], _cast_to(BF16))
    out = torch.empty(4, 256, dtype=torch.bfloat16)
    k(nan, out)
    assert torch.isnan(out).all()


def test_levels_agree_bit_for_bit_on_exp(monkeypatch) -> None:
    """The same exp polynomial and the same exact power-of-two scaling at every level."""
    x = torch.linspace(-110.0, 90.0, 2048).reshape(8, 256)
    results = []
    for level in LEVELS:
        _compile_at(monkeypatch, level)
        k = tile_kernel("k", [FP32], FP32, [8, 256], [8, 256], [0, 0], _exp)
        out = torch.empty_like(x)
        k(x, out)
        results.append(out)
    for level, out in zip(LEVELS, results):
        assert torch.equal(out, results[-1]), level
