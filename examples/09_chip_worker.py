"""Explicit dispatch with `ChipWorker`: compile once, load once, run many times.

`@pl.jit` kernels called eagerly look up their compiled program on every call. A serving
loop can instead drive the runtime directly:

1. `project.compile(scale=pl.RUNTIME)` compiles from the fully annotated signature (no
   sample tensors); `pl.RUNTIME` keeps `scale` a real scalar parameter supplied per call
   instead of baking one value into the kernel.
2. `worker.alloc_tensor(shape, dtype, init=w)` puts the weight in the chip's DDR once; the
   `DeviceTensor` persists across calls and is released when the worker closes.
3. `h = worker.register(compiled)` loads the kernels once; `h(...)` dispatches the program.
"""

import torch

import plang as pl
from plang.runtime import ChipWorker

M, K, N = 64, 128, 64


@pl.jit
def project(x: pl.Tensor[[M, K], pl.BF16], w: pl.Tensor[[K, N], pl.BF16],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]], scale: pl.Scalar[pl.FP32]):
    # out = scale * (x @ w): a cube matmul, then a vector multiply, in one core group
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.matmul(x, w, out_dtype=pl.FP32)
        out = pl.assemble(out, pl.mul(y, scale), [0, 0])
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    compiled = project.compile(scale=pl.RUNTIME)
    w = torch.randn(K, N).to(torch.bfloat16)
    steps = 8
    with ChipWorker() as worker:
        w_dev = worker.alloc_tensor(w.shape, w.dtype, init=w)  # persistent weight in DDR
        h = worker.register(compiled)
        for step in range(steps):
            x = torch.randn(M, K).to(torch.bfloat16)
            out = torch.empty(M, N)
            scale = 1.0 / (step + 1)
            h(x, w_dev, out, scale)
            torch.testing.assert_close(out, (x.float() @ w.float()) * scale, rtol=1e-4, atol=1e-4)
        assert worker.register(compiled) is h  # registering again reuses the loaded program
        assert worker.load_count == 1
    assert w_dev.freed  # closing the worker released the weight
    print(f"chip worker: {steps} dispatches of out = scale * (x @ w) with one persistent weight, "
          f"load_count == 1, checked against torch: OK")
