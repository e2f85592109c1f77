// A hand-written vector kernel for examples/12_external_cpp.py: out = softplus(x), computed
// stably as max(x, 0) + log1p(exp(-|x|)).
//
// plang compiles this file with the system C++ compiler and calls `softplus` through the
// same ABI as its generated kernels. "plang_kernel.h" (generated at build time from
// plang.codegen.kernel.abi.C_HEADER) declares the argument accessors: args[i] is the i-th
// parameter of the @pl.function signature, then the launch context.
#include <algorithm>
#include <cmath>

#include "plang_kernel.h"

extern "C" void softplus(void **args) {
  plang_memref *x = PLANG_TENSOR_ARG(args, 0);    // x: pl.Tensor[[rows, cols], pl.FP32]
  plang_memref *out = PLANG_TENSOR_ARG(args, 1);  // out: pl.Out[pl.Tensor[[rows, cols], pl.FP32]]
  const float *src = PLANG_DATA(float, x);
  float *dst = PLANG_DATA(float, out);
  const int64_t rows = PLANG_SIZE(x, 2, 0), cols = PLANG_SIZE(x, 2, 1);
  for (int64_t i = 0; i < rows; ++i) {
    const float *in_row = src + i * PLANG_STRIDE(x, 2, 0);  // strides are in elements;
    float *out_row = dst + i * PLANG_STRIDE(out, 2, 0);     // the innermost one is 1
    for (int64_t j = 0; j < cols; ++j) {
      const float v = in_row[j];
      out_row[j] = std::max(v, 0.0f) + std::log1p(std::exp(-std::fabs(v)));
    }
  }
}
