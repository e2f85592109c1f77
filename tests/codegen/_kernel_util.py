"""Helpers for kernel codegen tests: build a one-tile kernel from IR and run it on torch tensors."""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from plang.codegen.kernel import compile_kernel
from plang.dtypes import INDEX, DataType
from plang.ir import ConstInt, FunctionType, Min, ParamDirection, Sub, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call

FLOAT_DTYPES = ("FP32", "FP16", "BF16")
INT_DTYPES = ("INT8", "INT16", "INT32")


def tile_kernel(name: str, in_dtypes: Sequence[DataType], out_dtype: DataType,
                tensor_shape: Sequence[int], tile_shape: Sequence[int], offsets: Sequence[int],
                body: Callable, valid: Sequence[int] | None = None,
                out_tile_shape: Sequence[int] | None = None):
    """A kernel loading one tile per input at `offsets`, computing `body(b, tiles)` and
    storing the result tile at `offsets` (or at 0 for reshaped results) into `out`."""
    b = IRBuilder()
    with b.function(name, type=FunctionType.InCore) as f:
        ins = [f.param(f"x{i}", TensorType(list(tensor_shape), d)) for i, d in enumerate(in_dtypes)]
        out_shape = list(out_tile_shape) if out_tile_shape is not None else list(tensor_shape)
        out = f.param("out", TensorType(out_shape, out_dtype), ParamDirection.Out)
        kw = {"valid_shape": list(valid)} if valid is not None else {}
        tiles = [b.let(f"t{i}", make_call("tile.load", [x, list(offsets), list(tile_shape)], kw))
                 for i, x in enumerate(ins)]
        r = b.let("r", body(b, tiles))
        store_at = list(offsets) if out_tile_shape is None else [0] * len(out_shape)
        b.eval(make_call("tile.store", [r, store_at, out]))
    return compile_kernel(f.function)


def rand(shape: Sequence[int], dtype: DataType, low: float = -4.0, high: float = 4.0,
         generator: torch.Generator | None = None) -> torch.Tensor:
    td = dtype.to_torch()
    if dtype.is_float:
        return (torch.rand(*shape, generator=generator) * (high - low) + low).to(td)
    info = torch.iinfo(td)
    lo, hi = max(info.min, int(low * 30)), min(info.max, int(high * 30))
    return torch.randint(lo, hi + 1, tuple(shape), generator=generator, dtype=td)


def region(t: torch.Tensor, offsets: Sequence[int], shape: Sequence[int]) -> torch.Tensor:
    return t[tuple(slice(o, o + s) for o, s in zip(offsets, shape))]


def edge_valid(offsets: Sequence, window: Sequence[int], shape: Sequence[int]) -> list:
    """The valid shape of an edge tile: the part of `window` at `offsets` (ints or IR exprs)
    inside a tensor of `shape`, min(window, extent - offset) per axis (the ragged-tail idiom)."""
    return [ConstInt(min(w, n - o), INDEX) if isinstance(o, int)
            else Min(ConstInt(w, INDEX), Sub(ConstInt(n, INDEX), o))
            for o, w, n in zip(offsets, window, shape)]
