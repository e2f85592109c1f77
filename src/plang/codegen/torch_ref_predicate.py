"""Torch references of the packed predicate masks (`ir/ops/predicate.py`): `tile.cmp` /
`tile.cmps` pack the comparison 8 elements a byte, `tile.sel` / `tile.sels` unpack a packed
mask (or take one shaped like their values, nonzero = true)."""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..ir.ops.predicate import BITS, is_packed

Emitter = Callable[[Any], str]  # torch_ref_ops.OpArgs -> Python source


def pack_mask(flags: torch.Tensor, width: int) -> torch.Tensor:
    """Bit c % 8 of byte c // 8 of each row holds flags[..., c]; [..., width] UINT8."""
    rows = flags.reshape(-1, flags.shape[-1]).to(torch.int64)
    bits = torch.zeros(rows.shape[0], width * BITS, dtype=torch.int64)
    bits[:, : rows.shape[1]] = rows != 0
    weights = torch.tensor([1 << k for k in range(BITS)], dtype=torch.int64)
    packed = (bits.reshape(rows.shape[0], width, BITS) * weights).sum(-1).to(torch.uint8)
    return packed.reshape(*flags.shape[:-1], width)


def unpack_mask(mask: torch.Tensor, cols: int) -> torch.Tensor:
    """The [..., cols] BOOL flags of packed `mask` (bit c % w of element c // w, w the
    carrier's width in bits)."""
    c, width = torch.arange(cols), mask.element_size() * BITS
    return ((mask.to(torch.int64)[..., c // width] >> (c % width)) & 1).bool()


def _cmp(a) -> str:
    return (f"rt.pack_mask(rt.cmp({a['lhs']}, {a['rhs']}, {a.raw('cmp_type')!r}), "
            f"{a.render(a.call.type.shape[-1])})")


def _flags(a, values: str) -> str:
    mask, ref = a.values["mask"].type, a.values[values].type
    if not is_packed(mask, ref):
        return f"({a['mask']} != 0)"
    return f"rt.unpack_mask({a['mask']}, {a.render(ref.shape[-1])})"


def register(table: dict[str, Emitter]) -> None:
    table["tile.cmp"] = table["tile.cmps"] = _cmp
    table["tile.sel"] = lambda a: f"torch.where({_flags(a, 'lhs')}, {a['lhs']}, {a['rhs']})"
    table["tile.sels"] = lambda a: (f"torch.where({_flags(a, 'src')}, {a['src']}, "
                                    f"rt.fill_value({a['scalar']}, {a.dtype}))")
