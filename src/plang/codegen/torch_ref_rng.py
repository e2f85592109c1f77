"""Torch reference of `random` (Philox4x32 of counter + position // 4, lane position % 4; see
`ir/ops/rng.py`), in int64 arithmetic masked to 32 bits."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import torch

from ..ir.ops.rng import MULTIPLIERS, SEEDS, WEYL

Emitter = Callable[[Any], str]  # torch_ref_ops.OpArgs -> Python source
_MASK = 0xFFFFFFFF


def random(seeds: Sequence[int], shape: Sequence[int], dtype: torch.dtype, rounds: int) -> torch.Tensor:
    key0, key1, *counter = (int(s) & _MASK for s in seeds)
    p = torch.arange(math.prod(shape), dtype=torch.int64)
    x, carry = [], p >> 2
    for word in counter:
        total = (carry + word) & _MASK
        x.append(total)
        carry = ((total < word) & (carry != 0)).to(torch.int64)
    k0, k1 = torch.tensor(key0), torch.tensor(key1)
    for n in range(rounds):
        if n:
            k0, k1 = (k0 + WEYL[0]) & _MASK, (k1 + WEYL[1]) & _MASK
        p0, p1 = x[0] * MULTIPLIERS[0], x[2] * MULTIPLIERS[1]
        x = [((p1 >> 32) ^ x[1] ^ k0) & _MASK, p1 & _MASK, ((p0 >> 32) ^ x[3] ^ k1) & _MASK, p0 & _MASK]
    out = torch.stack(x, -1).gather(1, (p & 3)[:, None])[:, 0]
    bits = out.to(torch.uint32)
    return (bits if dtype == torch.uint32 else bits.view(torch.int32)).reshape(list(shape))


def _emit(a) -> str:
    seeds = ", ".join(a[n] for n in SEEDS)
    return f"rt.random([{seeds}], {a['shape']}, {a.dtype}, {a.raw('rounds')})"


def register(table: dict[str, Emitter]) -> None:
    table["tensor.random"] = table["tile.random"] = _emit
