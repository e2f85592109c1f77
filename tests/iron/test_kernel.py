"""Kernels a Worker calls: ExternalFunction (source string / file, C and C++), Kernel over a
prebuilt object, a @pl.jit.incore function; argument checks and error messages."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from iron_designs import vec

import plang as pl
import plang.iron as iron
from plang.errors import UnsupportedConstructError
from plang.iron import ExternalFunction, Kernel, KernelCompileError

C_SRC = r"""
#include <stdint.h>
void add_one(const int32_t *in, int32_t *out, int32_t n) {
    for (int32_t i = 0; i < n; ++i) out[i] = in[i] + 1;
}
"""


def test_external_function_from_string_runs_natively(scale_src):
    k = ExternalFunction("scale_i32", source_string=scale_src,
                         arg_types=[vec(64), vec(64), np.int32, np.int32])
    x = torch.arange(64, dtype=torch.int32)
    y = torch.zeros_like(x)
    k(x, y, 5, 64)
    assert torch.equal(y, x * 5)
    assert k.arg_shape(0) == (64,) and k.arg_dtype(2) == np.dtype(np.int32) and k.tile_size(1) == 64


def test_external_function_from_a_c_file(tmp_path):
    path = tmp_path / "add_one.c"
    path.write_text(C_SRC)
    k = ExternalFunction("add_one", source_file=str(path), arg_types=[vec(8), vec(8), np.int32])
    x = torch.arange(8, dtype=torch.int32)
    y = torch.zeros_like(x)
    k(x, y, 8)
    assert torch.equal(y, x + 1)


def test_argument_checks(scale_src):
    k = ExternalFunction("scale_i32", source_string=scale_src,
                         arg_types=[vec(64), vec(64), np.int32, np.int32])
    x = torch.arange(64, dtype=torch.int32)
    with pytest.raises(TypeError, match="argument 1 must be a contiguous torch.int32 array of shape"):
        k(x, torch.zeros(32, dtype=torch.int32), 1, 64)
    with pytest.raises(TypeError, match="argument 0 must be a contiguous torch.int32"):
        k(x.float(), x, 1, 64)
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        k(x, x, 1)
    with pytest.raises(TypeError, match="argument 2 is a scalar, got an array"):
        k(x, x, x, 64)


def test_errors():
    with pytest.raises(ValueError, match="source_file or source_string must be provided."):
        ExternalFunction("f")
    with pytest.raises(UnsupportedConstructError, match="Chess"):
        ExternalFunction("f", source_string="", use_chess=True)
    with pytest.raises(NotImplementedError):
        ExternalFunction("f", source_string="", inline=True, symbol_prefix="p")
    with pytest.raises(ValueError, match="Kernel name cannot be empty."):
        Kernel("", "x.o")
    missing = ExternalFunction("not_there", source_string='extern "C" void other(void) {}', arg_types=[])
    with pytest.raises(KernelCompileError, match="exports no symbol 'not_there'"):
        missing.build()
    bad = ExternalFunction("broken", source_string="this is not C++", arg_types=[])
    with pytest.raises(KernelCompileError, match="portable C/C\\+\\+"):
        bad.build()


def test_object_file_names_collide_only_when_explicit():
    a = ExternalFunction("same", source_string='extern "C" void same(void) {}', arg_types=[])
    b = ExternalFunction("same", source_string='extern "C" void same(void) { }', arg_types=[])
    assert a.object_file_name != b.object_file_name
    ExternalFunction("same2", object_file_name="fixed.o", source_string="int x;")
    with pytest.raises(ValueError, match="would collide with an already-registered instance"):
        ExternalFunction("same2", object_file_name="fixed.o", source_string="int y;")


def test_symbol_prefix():
    k = ExternalFunction("inc", source_string=(
        'extern "C" void lib_inc(int *x) { *x += 1; }'), arg_types=[vec(1)], symbol_prefix="lib")
    x = torch.zeros(1, dtype=torch.int32)
    k(x)
    assert x.item() == 1


def test_kernel_over_a_prebuilt_object(tmp_path):
    src, obj = tmp_path / "k.c", tmp_path / "k.o"
    src.write_text(C_SRC)
    subprocess.run(["cc", "-O2", "-fPIC", "-c", str(src), "-o", str(obj)], check=True)
    k = Kernel("add_one", str(obj), [vec(4), vec(4), np.int32])
    x = torch.arange(4, dtype=torch.int32)
    y = torch.zeros_like(x)
    k(x, y, 4)
    assert torch.equal(y, x + 1)


def test_an_aie_object_is_refused(tmp_path):
    obj = tmp_path / "aie.o"
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[18:20] = (264).to_bytes(2, "little")  # EM_AIE
    obj.write_bytes(bytes(header))
    with pytest.raises(UnsupportedConstructError, match="built for the AIE"):
        Kernel("k", str(obj), [])


@pl.jit.incore
def plus_seven(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0], [256])
    y = pl.store(pl.add(t, 7.0), [0], y)
    return y


def test_a_pl_jit_incore_kernel_as_worker_kernel():
    def body(src, dst, kernel):
        x, y = src.acquire(1), dst.acquire(1)
        kernel(x, y)
        src.release(1)
        dst.release(1)

    design = passthrough_float(1024, 256, body, plus_seven)
    assert isinstance(design.workers[0].fn_args[2], iron.IncoreKernel)
    a = torch.randn(1024)
    c = torch.zeros_like(a)
    design(a, c)
    torch.testing.assert_close(c, a + 7)


def passthrough_float(n, tile, body, kernel):
    ty = np.ndarray[(tile,), np.dtype[np.float32]]
    big = np.ndarray[(n,), np.dtype[np.float32]]
    of_in, of_out = iron.ObjectFifo(ty, name="in"), iron.ObjectFifo(ty, name="out")
    w = iron.Worker(body, [of_in.cons(), of_out.prod(), kernel])

    def sequence(a, c, i, o):
        i.fill(a)
        o.drain(c, wait=True)

    rt = iron.Runtime(sequence, [big, big, of_in.prod(), of_out.cons()])
    return iron.Program(iron.get_current_device(), rt, [w]).resolve_program()


def test_compiled_kernels_come_from_disk_in_a_new_process(tmp_path, scale_src):
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent(f"""
        import subprocess, numpy as np, torch
        calls = []
        real = subprocess.run
        def counting(cmd, *a, **k):
            if cmd and cmd[0] in ("cc", "c++"):
                calls.append(cmd[0])
            return real(cmd, *a, **k)
        subprocess.run = counting
        from plang.iron import ExternalFunction
        ty = np.ndarray[(8,), np.dtype[np.int32]]
        k = ExternalFunction("scale_i32", source_string={scale_src!r}, arg_types=[ty, ty, np.int32, np.int32])
        x = torch.arange(8, dtype=torch.int32); y = torch.zeros_like(x)
        k(x, y, 2, 8)
        assert torch.equal(y, x * 2)
        print("compiles", len(calls))
    """))
    env = {**os.environ, "PLANG_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
            for _ in range(2)]
    outs = [r.stdout.strip().splitlines()[-1] if r.returncode == 0 else r.stderr for r in runs]
    assert outs[0] != "compiles 0" and outs[1] == "compiles 0", outs
