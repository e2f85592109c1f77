"""`python rank_hang.py`: a 2-rank program whose wait nobody satisfies; it must fail within
`pipe_timeout` naming the rank and the signal."""

from __future__ import annotations

import torch

import plang as pl
import plang.distributed as pld
from plang.ir.distributed_compiled_program import DistributedConfig
from plang.runtime import RunConfig


@pl.jit
def never(y: pl.Out[pl.Tensor[[1, 64], pl.FP32]], ready: pld.DistributedTensor[[2, 1], pl.INT32]):
    pld.system.wait(ready, offsets=[1, 0], expected=1, cmp=pld.WaitCmp.Ge)
    return y


@pl.jit.host
def hang(y: pl.Out[pl.Tensor[[2, 1, 64], pl.FP32]]):
    ready_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        ready = pld.window(ready_buf, [2, 1], dtype=pl.INT32)
        never(y[r], ready, device=r)


if __name__ == "__main__":
    config = RunConfig(pipe_timeout=1.0, distributed_config=DistributedConfig(device_ids=[0, 1]))
    hang(torch.zeros(2, 1, 64), config=config)
