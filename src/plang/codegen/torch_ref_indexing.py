"""Torch references of the indexing ops added for the reference's programs (emitters for
`torch_ref_ops.TABLE` and the helpers their code calls through `rt`, which re-exports them):
the mask forms (`gather_mask`: a strided column slice; `scatter_mask`: an `index_copy_` onto
those columns of a copy of dst), the compare form of gather, `scatter_update`, `mscatter`,
`mgather` and `gatherb`."""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..ir.ops.common import mode_name, valid_of
from ..ir.ops.indexing import BLOCK_BYTES, COALESCE, GATHER_OOB
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


def _unsigned(index: torch.Tensor) -> torch.Tensor:
    return index.long() & 0xFFFFFFFF


def _within(x: torch.Tensor, valid: tuple[int, int]) -> torch.Tensor:
    """x with the cells outside its leading `valid` region zeroed."""
    out = torch.zeros_like(x)
    out[: valid[0], : valid[1]] = x[: valid[0], : valid[1]]
    return out


def mgather(mem: torch.Tensor, idx: torch.Tensor, coalesce: int | str, gather_oob: int | str,
            valid: tuple[int, int]) -> torch.Tensor:
    """Rows (`mem` folded to [rows, last dim]) or flat elements of mem at the unsigned indices
    idx, one past the end handled by the `gather_oob` policy; zeros outside `valid`. (Moved as
    signed integers of the payload's width: torch lacks masking ops for uint16 / uint32.)"""
    bits = mem.contiguous().view(_SIGNED[mem.element_size()])
    by_row = mode_name(coalesce, COALESCE) == "row"
    table = bits.reshape(-1, mem.shape[-1]) if by_row else bits.reshape(-1)
    keys, n = _unsigned(idx.reshape(-1) if by_row else idx), table.shape[0]
    policy = mode_name(gather_oob, GATHER_OOB)
    if policy == "clamp":
        keys = keys.clamp(max=n - 1)
    elif policy == "wrap":
        keys = keys % n
    inside = keys < n
    got = table[keys.clamp(max=n - 1)]
    got[~inside] = 0
    return _within(got, valid).view(mem.dtype)


_SIGNED = {1: torch.int8, 2: torch.int16, 4: torch.int32}


def gatherb(src: torch.Tensor, offset: torch.Tensor, dtype: torch.dtype,
            valid: tuple[int, int]) -> torch.Tensor:
    """The 32-byte blocks of src (row-major, rows padded to 32 bytes) at the byte offsets, as
    `dtype`; bytes past src's end read 0, and blocks outside offset's `valid` region are 0."""
    rows, cols = src.shape
    row_bytes = cols * src.element_size()
    data = torch.zeros(rows, -(-row_bytes // BLOCK_BYTES) * BLOCK_BYTES, dtype=torch.uint8)
    data[:, :row_bytes] = src.contiguous().view(torch.uint8).reshape(rows, row_bytes)
    flat = data.reshape(-1)
    at = _unsigned(offset)[..., None] + torch.arange(BLOCK_BYTES)
    blocks = torch.where(at < flat.numel(), flat[at.clamp(max=flat.numel() - 1)], 0).to(torch.uint8)
    blocks = _within(blocks, valid)
    return blocks.reshape(offset.shape[0], -1).view(dtype)


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
    table["tile.mgather"] = lambda a: (f"rt.mgather({a['mem']}, {a['idx']}, {a.raw('coalesce')!r}, "
                                       f"{a.raw('gather_oob')!r}, {a.render_dims(valid_of(a.call.type))})")
    table["tile.gatherb"] = lambda a: f"rt.gatherb({a['src']}, {a['offset']}, {a.dtype}, {a.valid('offset')})"
    for ns in ("tensor", "tile"):
        table[f"{ns}.gather_compare"] = _gather_compare(0)
        table[f"{ns}.gather_count"] = _gather_compare(1)
