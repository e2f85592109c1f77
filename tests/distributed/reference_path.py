"""`python reference_path.py`: a host program written against the reference's import path
(`import plang.language as pl`, `import plang.language.distributed as pld`) on one rank:
`pl.range` in the host body is Python's range, the dispatch runs on the rank's chip; exits
non-zero on a mismatch."""

from __future__ import annotations

import torch

import plang.language as pl
import plang.language.distributed as pld
from plang.ir.distributed_compiled_program import DistributedConfig
from plang.runtime import RunConfig


@pl.jit.incore
def shift(x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]], by: pl.Scalar[pl.INT32]):
    t = pl.add(pl.load(x, [0, 0], [4, 16]), pl.cast(by, target_type=pl.FP32))
    return pl.store(t, [0, 0], y)


@pl.jit
def on_rank(x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]], by: pl.Scalar[pl.INT32]):
    return shift(x, y, by)


@pl.jit.host
def every_rank(x: pl.Tensor[[1, 4, 16], pl.FP32], y: pl.Out[pl.Tensor[[1, 4, 16], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        on_rank(x[r], y[r], r + 3, device=r)


x, y = torch.randn(1, 4, 16), torch.zeros(1, 4, 16)
compiled = every_rank.compile(x, y, config=RunConfig(distributed_config=DistributedConfig(device_ids=[0])))
compiled(x, y)
torch.testing.assert_close(y, x + 3)
print("reference path ok")
