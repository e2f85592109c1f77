"""Hand-written `pl.split_aiv` regions in `@pl.jit` kernels: the reference's sparse-KV
pattern, where each AIV lane gathers half of a scattered row set, `pl.aic_gather` hands the
rejoined tile to the cube as a transposed matmul operand, and the cube's product is
assembled into the output outside every region."""

import torch

import plang as pl

POOL, DIM, ROWS, HALF, Q = 256, 64, 32, 16, 16


@pl.jit
def sparse_rows_qk(pool: pl.Tensor[[POOL, DIM], pl.BF16], idx: pl.Tensor[[ROWS], pl.INT32],
                   q: pl.Tensor[[Q, DIM], pl.BF16], out: pl.Out[pl.Tensor[[Q, ROWS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=2)]):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            rows = pl.full([HALF, DIM], dtype=pl.BF16, value=0.0)
            for k in pl.range(HALF):
                src = pl.cast(pl.read(idx, [lane * HALF + k]), pl.INDEX)
                rows = pl.gather_row(rows, pool, [k, 0], [src, 0], [1, DIM])
            kv = pl.aic_gather(rows)
        out[0:Q, 0:ROWS] = pl.matmul(q, kv, b_trans=True, out_dtype=pl.FP32)
    return out


def test_lanes_gather_rows_the_cube_multiplies_them():
    pool = torch.randn(POOL, DIM, dtype=torch.bfloat16)
    idx = torch.randperm(POOL)[:ROWS].to(torch.int32)
    q = torch.randn(Q, DIM, dtype=torch.bfloat16)
    out = torch.full((Q, ROWS), float("nan"))
    sparse_rows_qk(pool, idx, q, out)
    torch.testing.assert_close(out, q.float() @ pool[idx.long()].float().T, rtol=1e-3, atol=1e-3)


def test_the_rejoined_tile_is_transposed_on_the_cube():
    bf16 = torch.bfloat16
    text = sparse_rows_qk.lower(torch.empty(POOL, DIM, dtype=bf16), torch.zeros(ROWS, dtype=torch.int32),
                                torch.empty(Q, DIM, dtype=bf16), torch.empty(Q, ROWS)).as_python()
    aic = text.split("_aic(")[1].split("@pl.function")[0]
    assert "pl.tile.tpop_from_aiv(shape=[32, 64]" in aic and "pl.tile.transpose(" in aic


@pl.jit
def ragged_rows(a: pl.Tensor[[5, 64], pl.BF16], w: pl.Tensor[[32, 64], pl.BF16],
                out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    # a DDR view outside every region feeds the cube; each lane stores its share of the
    # product's 5 valid rows (lane 1 none), so rows 5-15 stay untouched
    with pl.at(level=pl.Level.CORE_GROUP):
        a_tile = pl.slice(a, [16, 64], [0, 0], valid_shape=[5, 64])
        acc = pl.matmul(a_tile, w, b_trans=True, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            out[lane * 8: lane * 8 + 8, 0:32] = pl.aiv_shard(acc)
    return out


def test_a_view_outside_the_regions_feeds_the_cube():
    a, w = torch.randn(5, 64, dtype=torch.bfloat16), torch.randn(32, 64, dtype=torch.bfloat16)
    out = torch.full((16, 32), float("nan"))
    ragged_rows(a, w, out)
    expect = torch.full((16, 32), float("nan"))
    expect[:5] = a.float() @ w.float().T
    torch.testing.assert_close(out, expect, equal_nan=True, rtol=1e-3, atol=1e-3)
