"""Torch references of `sort32` and `mrgsort` (emitters for `torch_ref_ops.TABLE` and the
helpers their code calls through `rt`): the same orders as the kernels, keyed by the signed
integer image of each FP32 value's bits, ties to the earlier element."""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..ir.ops.sort import RUN

Emitter = Callable[[Any], str]  # torch_ref_ops.OpArgs -> Python source


def _key(values: torch.Tensor) -> torch.Tensor:
    bits = values.contiguous().view(torch.int32)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


def sort32(src: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Each run of 32 elements per row sorted descending into [value, index bits] pairs."""
    rows = src.reshape(-1, src.shape[-1])
    bits = idx.reshape(rows.shape).to(torch.int64).bitwise_and(0xFFFFFFFF).to(torch.int32).view(torch.float32)
    out = torch.empty(rows.shape[0], rows.shape[1] * 2, dtype=torch.float32)
    for start in range(0, rows.shape[1], RUN):
        run = slice(start, start + RUN)
        order = torch.sort(_key(rows[:, run]), dim=-1, descending=True, stable=True).indices
        out[:, 2 * start: 2 * start + 2 * RUN: 2] = torch.gather(rows[:, run], 1, order)
        out[:, 2 * start + 1: 2 * start + 2 * RUN: 2] = torch.gather(bits[:, run], 1, order)
    return out.reshape(*src.shape[:-1], src.shape[-1] * 2)


def _merge(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Merge two sorted [n, 2] pair lists (ties take a)."""
    ka, kb = _key(a[:, 0]).tolist(), _key(b[:, 0]).tolist()
    order, i, j = [], 0, 0
    while i < len(ka) or j < len(kb):
        if i < len(ka) and (j == len(kb) or ka[i] >= kb[j]):
            order.append(i)
            i += 1
        else:
            order.append(len(ka) + j)
            j += 1
    return torch.cat([a, b])[order] if order else a


def _merge_all(runs: list[torch.Tensor]) -> torch.Tensor:
    while len(runs) > 2:
        runs = [_merge(*runs[k:k + 2]) if k + 1 < len(runs) else runs[k] for k in (0, 2)]
    return _merge(runs[0], runs[1])


def mrgsort(srcs: list[torch.Tensor], block_len: int | None) -> torch.Tensor:
    """Format 1 (block_len: every 4 runs of block_len columns) or format 2 (2 to 4 values)."""
    first = srcs[0]
    if block_len is not None:
        rows, run = first.reshape(-1, first.shape[-1] // 2, 2), max(int(block_len) // 2, 1)
        out = torch.empty_like(rows)
        for r in range(rows.shape[0]):
            for g in range(0, rows.shape[1], 4 * run):
                parts = [rows[r, min(g + q * run, rows.shape[1]): min(g + (q + 1) * run, rows.shape[1])]
                         for q in range(4)]
                out[r, g: g + 4 * run] = _merge_all(parts)
        return out.reshape(first.shape)
    rows = [s.reshape(-1, s.shape[-1] // 2, 2) for s in srcs]
    out = torch.stack([_merge_all([x[r] for x in rows]) for r in range(rows[0].shape[0])])
    return out.reshape(*first.shape[:-1], -1)


def _mrgsort(a) -> str:
    srcs = [a[n] for n in ("src0", "src1", "src2", "src3") if a.raw(n) is not None]
    block = a["block_len"] if a.raw("block_len") is not None else "None"
    return f"rt.mrgsort([{', '.join(srcs)}], {block})"


def register(table: dict[str, Emitter]) -> None:
    for ns in ("tensor", "tile"):
        table[f"{ns}.sort32"] = lambda a: f"rt.sort32({a['src']}, {a['idx']})"
        table[f"{ns}.mrgsort"] = _mrgsort
