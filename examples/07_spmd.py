"""SPMD: one kernel launched as many blocks, each block handling its own slice of rows.

Two spellings of the same idea:
- `with pl.spmd(BLOCKS): y = rms_norm_block(x, y)` launches a `@pl.jit.incore` kernel as
  BLOCKS blocks; the kernel asks `pl.tile.get_block_idx()` which block it is.
- `for i in pl.spmd(BLOCKS):` writes the per-block body inline; `i` is the block index and
  the passes outline the body into a kernel of its own.
The runtime runs the blocks of a launch in parallel on the simulated chip's cores.
"""

import torch

import plang as pl

BLOCKS = 8
EPS = 1e-6


@pl.jit.incore
def rms_norm_block(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows = x.shape[0] // BLOCKS
    n = x.shape[1]
    r = pl.tile.get_block_idx() * rows               # first row of this block
    t = pl.load(x, [r, 0], [rows, n])
    mean_sq = pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / n)   # [rows, 1]
    inv_rms = pl.rsqrt(pl.add(mean_sq, EPS))
    y = pl.store(pl.row_expand_mul(t, inv_rms), [r, 0], y)
    return y


@pl.jit
def norm_residual(x: pl.Tensor, res: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    # y = rms_norm(x): BLOCKS blocks of the same kernel
    with pl.spmd(BLOCKS):
        y = rms_norm_block(x, y)
    # z = relu(y) + res: the loop form, body inline
    rows = x.shape[0] // BLOCKS
    n = x.shape[1]
    for i in pl.spmd(BLOCKS):
        a = pl.load(y, [i * rows, 0], [rows, n])
        b = pl.load(res, [i * rows, 0], [rows, n])
        z = pl.store(pl.add(pl.relu(a), b), [i * rows, 0], z)
    return y, z


if __name__ == "__main__":
    x = torch.randn(512, 256)
    res = torch.randn(512, 256)
    y, z = torch.empty_like(x), torch.empty_like(x)
    norm_residual(x, res, y, z)
    expected_y = x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + EPS)
    torch.testing.assert_close(y, expected_y, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(z, torch.relu(expected_y) + res, rtol=1e-5, atol=1e-5)
    print(f"spmd: rms_norm then relu + residual on {tuple(x.shape)} fp32, {BLOCKS} blocks of "
          f"{x.shape[0] // BLOCKS} rows per launch (get_block_idx and the pl.spmd loop), "
          f"checked against torch: OK")
