"""External kernels written for the reference runtime's ABI (`kernel_entry(int64_t *args)`, a
`ChipTensor *` per tensor, scalars by value, `get_block_idx(args)`) run on the simulated chip."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import torch

from plang import ir
from plang.codegen.kernel import KernelCompileError

KERNEL = r"""
#include <cstdint>
#include <cstring>
#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *x = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *out = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  float scale;
  memcpy(&scale, &args[2], sizeof scale);
  int32_t row = get_block_idx(args);
  const float *src = reinterpret_cast<const float *>(x->buffer.addr) + x->start_offset;
  float *dst = reinterpret_cast<float *>(out->buffer.addr) + out->start_offset;
  for (uint32_t j = 0; j < x->shapes[1]; ++j)
    dst[row * out->strides[0] + j] = scale * src[row * x->strides[0] + j] + (float)get_block_num(args);
}
"""

PROGRAM = """
import plang as pl

T = pl.Tensor[[4, 8], pl.FP32]


@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, external_source="scale_rows.cpp")
    def scale_rows(self, x: T, out: pl.InOut[T], scale: pl.Scalar[pl.FP32]) -> T:
        ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, out: pl.Out[T]) -> T:
        with pl.spmd(core_num=4):
            out = self.scale_rows(x, out, 3.0)
        return out
"""


def _program(tmp_path, kernel: str):
    (tmp_path / "scale_rows.cpp").write_text(kernel)
    (tmp_path / "ref_abi_prog.py").write_text(PROGRAM)
    spec = importlib.util.spec_from_file_location("ref_abi_prog", tmp_path / "ref_abi_prog.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ref_abi_prog"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["ref_abi_prog"]
    return module.P


def test_a_reference_abi_kernel_runs_per_block(tmp_path):
    x, out = torch.randn(4, 8), torch.zeros(4, 8)
    ir.compile(_program(tmp_path, KERNEL), dump_passes=False)(x, out)
    torch.testing.assert_close(out, 3.0 * x + 4.0)


def test_a_pto_instruction_is_a_compile_error_naming_it(tmp_path):
    kernel = KERNEL.replace("int32_t row", "pipe_barrier(PIPE_ALL);\n  int32_t row")
    with pytest.raises(KernelCompileError, match="pipe_barrier"):
        ir.compile(_program(tmp_path, kernel), dump_passes=False)
