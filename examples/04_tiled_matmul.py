"""Tiled matmul: C = A @ B with fp16 inputs and an fp32 result.

The kernel walks the [M, N] output in [BM, BN] blocks. For each block it multiplies the
first K-slice with `pl.matmul` (fp16 x fp16 -> fp32 accumulator tile) and adds the
remaining K-slices with `pl.matmul_acc`, carrying the accumulator through the K loop as a
loop-carried value (`init_values=` in, `pl.yield_` out). InferTileMemorySpace stages the
operand tiles through Mat into the cube's Left / Right buffers and keeps the accumulator in
Acc; the kernel does only cube work, so it becomes an AIC (cube core) kernel.
"""

import torch

import plang as pl

BM, BN, BK = 64, 64, 64


@pl.jit.incore
def matmul_kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    m, k_total = a.shape
    n = b.shape[1]
    for i in pl.range(0, m, BM):
        for j in pl.range(0, n, BN):
            a0 = pl.load(a, [i, 0], [BM, BK])
            b0 = pl.load(b, [0, j], [BK, BN])
            acc0 = pl.matmul(a0, b0)                 # [BM, BN] fp32
            for k, (acc,) in pl.range(BK, k_total, BK, init_values=(acc0,)):
                ak = pl.load(a, [i, k], [BM, BK])
                bk = pl.load(b, [k, j], [BK, BN])
                acc_next = pl.matmul_acc(acc, ak, bk)  # acc + ak @ bk
                acc_out = pl.yield_(acc_next)
            c = pl.store(acc_out, [i, j], c)
    return c


@pl.jit
def tiled_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = matmul_kernel(a, b, c)
    return c


if __name__ == "__main__":
    M, K, N = 128, 256, 192
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    c = torch.empty(M, N, dtype=torch.float32)
    tiled_matmul(a, b, c)
    expected = a.float() @ b.float()          # exact products of fp16 values, fp32 sums
    torch.testing.assert_close(c, expected, rtol=1e-4, atol=1e-3)
    print(f"tiled matmul: [{M}, {K}] @ [{K}, {N}] fp16 -> fp32 in {BM}x{BN} blocks, "
          f"matmul_acc over {K // BK} K-slices, checked against torch: OK")
