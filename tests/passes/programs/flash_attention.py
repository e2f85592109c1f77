"""Flash attention forward for one 64-row query block: QK^T, online softmax and PV in one
InCore scope split UP_DOWN across the two AIV lanes. K is stored transposed ([d, kv])."""
import plang as pl


@pl.program
class FlashAttention:
    @pl.function
    def main(self, q: pl.Tensor[[64, 128], pl.BF16], kt: pl.Tensor[[128, 256], pl.BF16],
             v: pl.Tensor[[256, 128], pl.BF16],
             o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)],
                   name_hint="flash_attn"):
            qt = pl.slice(q, [64, 128], [0, 0])
            m = pl.full([64, 1], pl.FP32, -1e30)
            l = pl.full([64, 1], pl.FP32, 0.0)
            acc = pl.full([64, 128], pl.FP32, 0.0)
            for j in pl.range(4):
                kj = pl.slice(kt, [128, 64], [0, j * 64])
                vj = pl.slice(v, [64, 128], [j * 64, 0])
                s = pl.matmul(qt, kj, out_dtype=pl.FP32)
                s = pl.mul(s, 0.088388)
                m_new = pl.maximum(m, pl.row_max(s))
                p = pl.exp(pl.row_expand_sub(s, m_new))
                alpha = pl.exp(pl.sub(m, m_new))
                l = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                pv = pl.matmul(pl.cast(p, pl.BF16), vj, out_dtype=pl.FP32)
                acc = pl.add(pl.row_expand_mul(acc, alpha), pv)
                m = m_new
            o = pl.assemble(o, pl.row_expand_div(acc, l), [0, 0])
        return o
