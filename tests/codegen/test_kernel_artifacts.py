"""Kernel artifacts and errors: MLIR text kept, persisted kernels loaded by a fresh process,
external C sources behind the same ABI, and compile-time errors naming op, dtype, function."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from _kernel_util import tile_kernel

from plang.codegen.kernel import KernelCompileError, compile_kernel, load_kernel
from plang.dtypes import FP8E4M3FN, FP32
from plang.ir import Function, FunctionType, ParamDirection, ScalarType, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call


def _axpy():
    b = IRBuilder()
    with b.function("axpy", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([4, 40], FP32))
        a = f.param("a", ScalarType(FP32))
        out = f.param("out", TensorType([4, 40], FP32), ParamDirection.Out)
        t = b.let("t", make_call("tile.load", [x, [0, 0], [4, 40]]))
        r = b.let("r", make_call("tile.muls", [t, a]))
        b.eval(make_call("tile.store", [r, [0, 0], out]))
    return f.function


def test_mlir_text_and_signature() -> None:
    k = compile_kernel(_axpy())
    assert k.name == "axpy"
    assert "func.func @axpy" in k.mlir_text and "vector.transfer_read" in k.mlir_text
    assert "memref<?x?xf32, strided<[?, 1], offset: ?>>" in k.mlir_text
    assert k.signature.describe() == ("(x: Tensor[rank 2, FP32], a: Scalar[FP32], "
                                      "out: Tensor[rank 2, FP32], ctx: LaunchContext*)")


def test_saved_kernel_runs_in_a_fresh_process(tmp_path) -> None:
    k = compile_kernel(_axpy())
    path = str(tmp_path / "axpy.so")
    k.save(path)
    assert os.path.exists(path) and os.path.exists(path + ".json")
    assert not [p for p in os.listdir(tmp_path) if "tmp" in p]
    script = ("import sys, torch; from plang.codegen.kernel import load_kernel\n"
              "k = load_kernel(sys.argv[1]); x = torch.arange(160.).reshape(4, 40); o = torch.zeros(4, 40)\n"
              "k(x, 2.5, o); assert torch.equal(o, x * 2.5); print(k.mlir_text.count('func.func'))\n"
              "assert 'torch_mlir' not in sys.modules, 'loading a kernel imported the MLIR bindings'")
    res = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "1"
    again = load_kernel(path)
    x, o = torch.randn(4, 40), torch.zeros(4, 40)
    again(x, -1.0, o)
    assert torch.equal(o, -x)


def test_external_c_source(tmp_path) -> None:
    src = tmp_path / "scale.c"
    src.write_text("""#include "plang_kernel.h"
void scale(void **args) {
  plang_memref *x = PLANG_TENSOR_ARG(args, 0), *o = PLANG_TENSOR_ARG(args, 2);
  float a = PLANG_SCALAR_ARG(float, args, 1);
  plang_launch_context *ctx = PLANG_CONTEXT_ARG(args, 3);
  for (int64_t i = 0; i < PLANG_SIZE(x, 2, 0); i++)
    for (int64_t j = 0; j < PLANG_SIZE(x, 2, 1); j++)
      PLANG_DATA(float, o)[i * PLANG_STRIDE(o, 2, 0) + j] =
          a * PLANG_DATA(float, x)[i * PLANG_STRIDE(x, 2, 0) + j] + (float)ctx->block_idx;
}
""")
    b = IRBuilder()
    with b.function("scale", type=FunctionType.AIV) as f:
        f.param("x", TensorType([3, 5], FP32))
        f.param("a", ScalarType(FP32))
        f.param("out", TensorType([3, 5], FP32), ParamDirection.Out)
    fn: Function = f.function
    k = compile_kernel(fn, external_source=str(src))
    base = torch.randn(6, 9)
    x, o = base[1:4, 2:7], torch.zeros(3, 5)
    k(x, 3.0, o, block_idx=2, block_num=4)
    assert torch.equal(o, 3.0 * x + 2)


def test_external_source_compile_error_is_reported(tmp_path) -> None:
    src = tmp_path / "bad.c"
    src.write_text("void bad(void **args) { this is not C; }\n")
    b = IRBuilder()
    with b.function("bad", type=FunctionType.AIV) as f:
        f.param("x", TensorType([3], FP32))
    with pytest.raises(KernelCompileError, match="compiling .*bad.c failed"):
        compile_kernel(f.function, external_source=str(src))


def test_unsupported_dtype_names_op_dtype_and_function() -> None:
    with pytest.raises(KernelCompileError,
                       match=r"function 'u_exp': parameter 'x0': dtype FP8E4M3FN is not supported"):
        tile_kernel("u_exp", [FP8E4M3FN], FP8E4M3FN, (2, 8), (2, 8), (0, 0),
                    lambda b, t: make_call("tile.exp", [t[0]]))


def test_unsupported_op_is_named() -> None:
    b = IRBuilder()
    with b.function("tens", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([3, 16], FP32))
        b.let("y", make_call("tensor.add", [x, x]))
    with pytest.raises(KernelCompileError,
                       match=r"function 'tens': op tensor.add is not supported by the kernel backend"):
        compile_kernel(f.function)


def test_non_core_function_is_rejected() -> None:
    b = IRBuilder()
    with b.function("orch", type=FunctionType.Orchestration) as f:
        f.param("x", TensorType([3], FP32))
    with pytest.raises(KernelCompileError, match="'orch' is Orchestration, not a core kernel"):
        compile_kernel(f.function)


def test_argument_errors() -> None:
    k = compile_kernel(_axpy())
    with pytest.raises(TypeError, match="expects 3 arguments"):
        k(torch.zeros(4, 40), 1.0)
    with pytest.raises(TypeError, match="'x' expects a rank-2 torch.float32 tensor"):
        k(torch.zeros(4, 40, dtype=torch.float16), 1.0, torch.zeros(4, 40))
