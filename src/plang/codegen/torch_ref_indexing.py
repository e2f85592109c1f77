"""Torch references of the indexing ops added for the reference's programs (emitters for
`torch_ref_ops.TABLE` and the helpers their code calls through `rt`, which re-exports them):
the mask forms (`gather_mask`: a strided column slice; `scatter_mask`: an `index_copy_` onto
those columns of a copy of dst), the compare form of gather, `scatter_update` and `mscatter`."""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..ir.ops.masks import stride_phase

Emitter = Callable[[Any], str]  # torch_ref_ops.OpArgs -> Python source


def gather_compare(x: torch.Tensor, kvalue: Any, cmp_type: int | str, out_cols: int,
                   offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(indices [rows, out_cols] INT32, counts [1, rows] INT64) of the compare form."""
    name = cmp_type if isinstance(cmp_type, str) else ("eq", "ne", "lt", "le", "gt", "ge")[cmp_type]
    hits = getattr(torch, name)(x, kvalue)
    rows = x.shape[0]
    out = torch.zeros(rows, out_cols, dtype=torch.int32)
    counts = torch.zeros(1, rows, dtype=torch.int64)
    for r in range(rows):
        cols = torch.nonzero(hits[r]).flatten()[:out_cols]
        out[r, : cols.numel()] = (cols + offset).to(torch.int32)
        counts[0, r] = cols.numel()
    return out, counts


def mscatter(src: torch.Tensor, idx: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """out.reshape(-1)[idx] = src (row-major order; out-of-range indices write nothing)."""
    flat, index, values = out.reshape(-1), idx.reshape(-1).long(), src.reshape(-1).to(out.dtype)
    ok = (index >= 0) & (index < flat.numel())
    flat[index[ok]] = values[ok]
    return out


def scatter_update(x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """A copy of x with row index.flat[k] = src row k, in order (x, src folded to rows)."""
    out = x.clone()
    rows, values = out.view(-1, x.shape[-1]), src.reshape(-1, x.shape[-1])
    for k, row in enumerate(index.reshape(-1).tolist()):
        if 0 <= row < rows.shape[0]:
            rows[row] = values[k]
    return out


def _gather_mask(data: str) -> Emitter:
    def emit(a) -> str:
        stride, phase = stride_phase(a.raw("mask_pattern"))
        out = f"{a[data]}[:, {phase}::{stride}].contiguous()"
        if a.call.type.dtype is not a.call.args[0].type.dtype:
            out += f".view({a.dtype})"
        return out
    return emit


def _scatter_mask(data: str) -> Emitter:
    def emit(a) -> str:
        stride, phase = stride_phase(a.raw("mask_pattern"))
        cols = a.call.type.shape[1]
        return (f"{a['dst']}.clone().index_copy_(1, torch.arange({phase}, {a.render(cols)}, {stride}), "
                f"{a[data]})")
    return emit


def _gather_compare(part: int) -> Emitter:
    def emit(a) -> str:
        out = (f"rt.gather_compare({a['input']}, {a['kvalue']}, {a.raw('cmp_mode')!r}, {a.raw('out_cols')}, "
               f"{a.raw('offset')})[{part}]")
        return out if part == 0 else f"{out}.to({a.dtype})"
    return emit


def register(table: dict[str, Emitter]) -> None:
    table["tensor.gather_mask"] = _gather_mask("input")
    table["tile.gather_mask"] = _gather_mask("src")
    table["tensor.scatter_mask"] = _scatter_mask("input")
    table["tile.scatter_mask"] = _scatter_mask("src")
    for ns in ("tensor", "tile"):
        table[f"{ns}.scatter_update"] = lambda a: f"rt.scatter_update({a['input']}, {a['index']}, {a['src']})"
    table["tile.mscatter"] = lambda a: f"rt.mscatter({a['src']}, {a['idx']}, {a['output_tensor']})"
    for ns in ("tensor", "tile"):
        table[f"{ns}.gather_compare"] = _gather_compare(0)
        table[f"{ns}.gather_count"] = _gather_compare(1)
