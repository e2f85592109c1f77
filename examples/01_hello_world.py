"""Hello world: add two 128x128 fp32 tensors with one tile kernel.

The kernel loads both inputs into on-chip tiles, adds them and stores the sum into the
output tensor. `@pl.jit` specializes it for the tensors it is called with, lowers it,
compiles the core kernel to native code (MLIR -> LLVM) and runs it on the simulated chip.
"""

import torch

import plang as pl


@pl.jit.incore
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.load(a, [0, 0], [128, 128])
    tb = pl.load(b, [0, 0], [128, 128])
    tc = pl.add(ta, tb)
    c = pl.store(tc, [0, 0], c)
    return c


@pl.jit
def hello(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = tile_add(a, b, c)
    return c


if __name__ == "__main__":
    a = torch.randn(128, 128)
    b = torch.randn(128, 128)
    c = torch.empty(128, 128)
    hello(a, b, c)
    torch.testing.assert_close(c, a + b)
    print(f"hello world: c = a + b on a {tuple(c.shape)} fp32 tile, checked against torch: OK")
