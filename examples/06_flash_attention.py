"""Flash attention: cube and vector work in one scope, online softmax over KV blocks.

One query block attends to the keys and values in blocks of KV_BLOCK rows. Per block the
cube computes S = Q K_j^T and P V_j (matmuls, bf16 in, fp32 out); the vector cores keep the
online softmax: a running row max `m`, a running row sum `l` and the rescaled output `acc`,
all carried from block to block through `pl.range(..., init_values=...)`.

The whole body sits in one `pl.at(level=CORE_GROUP)` scope with `pl.split(UP_DOWN)`: the
passes outline it into a kernel, split that kernel into an AIC (cube) kernel and an AIV
(vector) kernel joined by a Group, and turn every value crossing between them into a
tpush / tpop pair on a pipe. UP_DOWN means each of the two vector lanes handles half of the
query rows. Print `flash_attention.lower(q, kt, v, o).as_python()` to see the three kernels.
"""

import torch

import plang as pl

KV_BLOCK = 64


@pl.jit
def flash_attention(q: pl.Tensor, kt: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    # q: [rows, d] bf16, kt: K transposed [d, kv_len] bf16, v: [kv_len, d] bf16, o: [rows, d] fp32
    rows = q.shape[0]
    d = q.shape[1]
    kv_len = v.shape[0]
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        qt = pl.slice(q, [rows, d], [0, 0])
        m0 = pl.full([rows, 1], pl.FP32, -1e30)  # running row max
        l0 = pl.full([rows, 1], pl.FP32, 0.0)  # running row sum of exp(s - m)
        acc0 = pl.full([rows, d], pl.FP32, 0.0)  # running (unnormalized) output
        for j, (m, l, acc) in pl.range(kv_len // KV_BLOCK, init_values=(m0, l0, acc0)):
            kj = pl.slice(kt, [d, KV_BLOCK], [0, j * KV_BLOCK])
            vj = pl.slice(v, [KV_BLOCK, d], [j * KV_BLOCK, 0])
            s = pl.mul(pl.matmul(qt, kj, out_dtype=pl.FP32), d ** -0.5)  # cube, then vector
            m_new = pl.maximum(m, pl.row_max(s))
            p = pl.exp(pl.row_expand_sub(s, m_new))
            alpha = pl.exp(pl.sub(m, m_new))  # rescales what was accumulated so far
            l_new = pl.add(pl.mul(l, alpha), pl.row_sum(p))
            pv = pl.matmul(pl.cast(p, pl.BF16), vj, out_dtype=pl.FP32)  # back to the cube
            acc_new = pl.add(pl.row_expand_mul(acc, alpha), pv)
            m_last, l_last, acc_last = pl.yield_(m_new, l_new, acc_new)
        o = pl.assemble(o, pl.row_expand_div(acc_last, l_last), [0, 0])
    return o


if __name__ == "__main__":
    torch.manual_seed(0)
    rows, d, kv_len = 64, 128, 256
    q = torch.randn(rows, d).to(torch.bfloat16)
    k = torch.randn(kv_len, d).to(torch.bfloat16)
    v = torch.randn(kv_len, d).to(torch.bfloat16)
    o = torch.empty(rows, d)
    flash_attention(q, k.t().contiguous(), v, o)

    expected = torch.softmax(q.float() @ k.float().t() * d ** -0.5, dim=-1) @ v.float()
    # P is rounded to bf16 before the second matmul, as on the real cube
    torch.testing.assert_close(o, expected, rtol=1e-2, atol=1e-2)
    kernels = sorted(flash_attention.compile(q, k.t().contiguous(), v, o).kernels)
    print(f"flash attention: q {rows}x{d}, {kv_len // KV_BLOCK} KV blocks of {KV_BLOCK}, "
          f"kernels {kernels}, checked against torch: OK")
