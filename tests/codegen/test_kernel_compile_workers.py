"""Compile workers: an LLVM failure — here an `abort()` inside LLVM's instruction selection —
is a `KernelCompileError` naming the kernel, the target and LLVM's message; the process, its
other kernels and its tensors survive, and the next compile gets a fresh worker."""

from __future__ import annotations

import pytest
import torch
from _kernel_util import tile_kernel

import plang.codegen.kernel.compile_workers as compile_workers
import plang.codegen.kernel.native as native
from plang.codegen.kernel import KernelCompileError, load_kernel
from plang.dtypes import FP32
from plang.ir.ops import make_call
from plang.target import Isa, runnable_levels


def _exp_kernel():
    return tile_kernel("exp_kernel", [FP32], FP32, [4, 64], [4, 64], [0, 0],
                       lambda b, t: make_call("tile.exp", [t[0]]))


@pytest.mark.skipif(compile_workers.worker_count() == 0, reason="compile workers are off")
def test_an_llvm_abort_is_a_kernel_compile_error_and_the_process_lives(monkeypatch) -> None:
    x = torch.linspace(-3, 3, 256).reshape(4, 64)
    before = _exp_kernel()
    kept = torch.empty(4, 64)
    before(x, kept)
    # A lowering that believes the target has `vscalefps` when it has not: the AVX-512
    # intrinsic reaches LLVM for a target without AVX-512, and instruction selection aborts.
    monkeypatch.setenv("PLANG_ISA", runnable_levels()[0])
    monkeypatch.setattr(Isa, "scalef", property(lambda self: True))
    with pytest.raises(KernelCompileError) as err:
        _exp_kernel()
    message = str(err.value)
    assert "kernel 'exp_kernel'" in message and f"({runnable_levels()[0]})" in message
    assert "compile worker died" in message and "LLVM ERROR" in message
    monkeypatch.undo()
    again = torch.empty(4, 64)
    _exp_kernel()(x, again)           # a fresh worker compiles the next kernel
    before(x, kept)                   # the earlier kernel still runs
    torch.testing.assert_close(again, torch.exp(x), rtol=4e-7, atol=0)
    assert torch.equal(kept, again)


def test_worker_count_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("PLANG_COMPILE_WORKERS", "3")
    assert compile_workers.worker_count() == 3
    monkeypatch.setenv("PLANG_COMPILE_WORKERS", "many")
    with pytest.raises(KernelCompileError, match="PLANG_COMPILE_WORKERS='many': expected a number"):
        compile_workers.worker_count()


def test_in_process_compiles_when_workers_are_off(monkeypatch) -> None:
    monkeypatch.setattr(compile_workers, "pool", lambda: None)
    k = _exp_kernel()
    assert k._engine is not None and k._library is None
    x = torch.linspace(-3, 3, 256).reshape(4, 64)
    out = torch.empty(4, 64)
    k(x, out)
    torch.testing.assert_close(out, torch.exp(x), rtol=4e-7, atol=0)


@pytest.mark.parametrize("linker", [None, "false"])
def test_kernels_link_with_the_cc_driver_without_a_working_ld(monkeypatch, tmp_path, linker) -> None:
    """No `ld` on the path (None) or one that fails ("false"): `cc -shared` links instead."""
    monkeypatch.setattr(native, "_LINKER", linker)
    monkeypatch.setattr(compile_workers, "pool", lambda: None)
    k = _exp_kernel()
    path = str(tmp_path / "exp_kernel.so")
    k.save(path)  # an in-process kernel is linked when saved
    x = torch.linspace(-3, 3, 256).reshape(4, 64)
    out = torch.empty(4, 64)
    load_kernel(path)(x, out)
    torch.testing.assert_close(out, torch.exp(x), rtol=4e-7, atol=0)
