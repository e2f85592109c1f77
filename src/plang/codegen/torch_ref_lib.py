"""Runtime helpers for the torch reference code that `torch_ref.torch_codegen` generates.

The generated module does `import plang.codegen.torch_ref_lib as rt`. Everything here is
plain torch on CPU tensors, written from the language reference's op semantics and
independent of the MLIR kernel path:

- tiles are torch tensors of the tile's full shape; cells outside a tile's valid region
  are zero unless an op says otherwise;
- the cube accumulates FP16 / BF16 / FP32 operands in FP32 and INT8 in INT32;
- casts apply the documented rounding modes (none / rint / round / floor / ceil / trunc /
  odd) and saturation (on by default for integer destinations, off for float ones);
- launch context (block index, block count, AIV lane) is thread-local, and AIC <-> AIV pipes
  are blocking FIFOs, so a Group's kernels run as concurrent threads.
"""

from __future__ import annotations

import math
import queue
import threading
from contextlib import contextmanager
from typing import Any, Callable, Sequence

import torch

from ..dtypes import DataType  # noqa: F401  (called by generated code as rt.*)
from ..target import Device
from .torch_ref_indexing import gather_compare, gatherb, mgather, mscatter, scatter_update  # noqa: F401  (called by generated code as rt.*)
from .torch_ref_pld import dispatch, pld_rank  # noqa: F401  (called by generated code as rt.*)
from .torch_ref_predicate import pack_mask, unpack_mask  # noqa: F401  (called by generated code as rt.*)
from .torch_ref_rng import random  # noqa: F401  (called by generated code as rt.*)
from .torch_ref_sort import mrgsort, sort32  # noqa: F401  (called by generated code as rt.*)

#: The chip geometry `available_cluster_count()` / `available_aiv_count()` report.
DEVICE = Device()
CMP = ("eq", "ne", "lt", "le", "gt", "ge")
CAST_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
PIPE_TIMEOUT_S = 30.0
VALID_ATTR = "_plang_valid"
"""Attribute `slice_` sets on a tensor holding a window's valid part (assemble writes only it)."""


# -- elementwise ----------------------------------------------------------------------------

def check_shape(value: Any, shape: tuple[int, ...], dtype: torch.dtype, name: str) -> None:
    """`torch_codegen(check_shapes=True)`: raise unless `value`, variable `name`, is a tensor
    of the `shape` and `dtype` its IR type declares."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != shape or value.dtype != dtype:
        got = f"{list(value.shape)} {value.dtype}" if isinstance(value, torch.Tensor) \
            else type(value).__name__
        raise AssertionError(f"{name} is {got}; its type says {list(shape)} {dtype}")


def binary(op: str, a: torch.Tensor, b: Any) -> torch.Tensor:
    """An elementwise binary op whose result keeps `a`'s dtype (b: tensor or number)."""
    if op == "div":
        out = torch.div(a, b, rounding_mode=None if a.is_floating_point() else "trunc")
    elif op == "fmod":
        out = torch.fmod(a, b)
    elif op in ("maximum", "minimum"):
        b = b if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=a.dtype)
        out = getattr(torch, op)(a, b)
    else:
        out = getattr(torch, op)(a, b)
    return out.to(a.dtype)


def cmp(a: torch.Tensor, b: Any, cmp_type: int | str) -> torch.Tensor:
    name = cmp_type if isinstance(cmp_type, str) else CMP[cmp_type]
    return getattr(torch, name)(a, b)


def recip(x: torch.Tensor) -> torch.Tensor:
    return torch.reciprocal(x).to(x.dtype)


def lrelu(x: torch.Tensor, slope: float) -> torch.Tensor:
    return torch.where(x > 0, x, x * slope).to(x.dtype)


def fill_value(v: Any, dtype: torch.dtype) -> torch.Tensor:
    """Scalar `v` as a 0-d tensor of `dtype`; a number converts to an integer dtype as C does
    (toward zero, then wrapping to the dtype's width: -3.0 as UINT32 is 2**32 - 3)."""
    if dtype.is_floating_point or dtype is torch.bool:
        return torch.tensor(v, dtype=dtype)
    return _wrap(torch.tensor(int(v), dtype=torch.int64), dtype)


# -- casts ------------------------------------------------------------------------------------

def _mode_name(mode: int | str) -> str:
    return mode if isinstance(mode, str) else CAST_MODES[mode]


def _step(r: torch.Tensor, away: torch.Tensor) -> torch.Tensor:
    """Move each selected float `r` one ulp away from zero (`away`) or toward it (~away)."""
    bits = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
            torch.float64: torch.int64}[r.dtype]
    i = r.view(bits)
    return torch.where(away, i + 1, i - 1).view(r.dtype)


def _round_float(x: torch.Tensor, dtype: torch.dtype, mode: str) -> torch.Tensor:
    """Narrow a float tensor to the float `dtype` with a directed rounding mode."""
    r = x.to(dtype)
    if mode in ("none", "rint", "round") or x.dtype == dtype:
        return r
    wide = x.to(torch.float64)
    back = r.to(torch.float64)
    finite = torch.isfinite(wide)  # an overflow to inf is a candidate for directed rounding
    sign_pos = wide > 0
    if mode in ("floor", "ceil"):
        too_big = back > wide if mode == "floor" else back < wide
        fix = finite & too_big
        # floor moves toward -inf: away from zero for negatives, toward zero for positives
        away = ~sign_pos if mode == "floor" else sign_pos
    else:  # trunc / odd: first truncate toward zero
        fix = finite & (back.abs() > wide.abs())
        away = torch.zeros_like(fix)
    zero_target = fix & (back == 0)  # floor / ceil of a tiny value: the smallest subnormal
    out = torch.where(fix & ~zero_target, _step(r, away), r)
    out = torch.where(zero_target, torch.where(sign_pos, _smallest(dtype), -_smallest(dtype)), out)
    if mode == "odd":
        inexact = finite & (out.to(torch.float64) != wide)
        even = (out.view(_int_of(dtype)) & 1) == 0
        out = torch.where(inexact & even & (out != 0), _step(out, torch.ones_like(inexact)), out)
        tiny = torch.where(sign_pos, _smallest(dtype), -_smallest(dtype))
        out = torch.where(inexact & (out == 0), tiny, out)
    return out


def _int_of(dtype: torch.dtype) -> torch.dtype:
    return {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
            torch.float64: torch.int64}[dtype]


def _smallest(dtype: torch.dtype) -> torch.Tensor:
    return torch.ones((), dtype=_int_of(dtype)).view(dtype)


def _round_to_int(x: torch.Tensor, mode: str) -> torch.Tensor:
    x = x.to(torch.float64)
    if mode == "round":  # half away from zero
        return torch.sign(x) * torch.floor(x.abs() + 0.5)
    if mode in ("floor", "ceil", "trunc"):
        return getattr(torch, mode)(x)
    return torch.round(x)  # none / rint / odd: half to even


def cast(x: torch.Tensor, dtype: torch.dtype, mode: int | str = "round",
         saturation: int | str | None = None) -> torch.Tensor:
    """Elementwise conversion with the language's rounding and saturation rules."""
    m = _mode_name(mode)
    sat = saturation if saturation is None or isinstance(saturation, str) else ("off", "on")[saturation]
    if dtype == torch.bool:
        return x != 0
    if dtype.is_floating_point:
        src = x.to(torch.float64) if not x.is_floating_point() else x
        out = _round_float(src, dtype, m)
        if sat == "on":
            fi = torch.finfo(dtype)
            out = torch.where(torch.isinf(out) & torch.isfinite(src.to(torch.float64)),
                              torch.where(out > 0, fi.max, fi.min).to(dtype), out)
        return out
    info = torch.iinfo(dtype)
    if x.is_floating_point():
        r = _round_to_int(x, m)
        if sat in (None, "on"):
            r = torch.nan_to_num(r, nan=0.0).clamp(info.min, info.max)
            return r.to(torch.int64).to(dtype)
        r = torch.nan_to_num(r, nan=0.0, posinf=0.0, neginf=0.0)
        return _wrap(r.to(torch.int64), dtype)
    if sat in (None, "on"):
        return x.to(torch.int64).clamp(info.min, info.max).to(dtype)
    return _wrap(x.to(torch.int64), dtype)


def _wrap(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    bits = torch.iinfo(dtype).bits
    if bits >= 64:
        return x.to(dtype)
    m = x & ((1 << bits) - 1)
    if torch.iinfo(dtype).min < 0:
        m = torch.where(m >= (1 << (bits - 1)), m - (1 << bits), m)
    return m.to(dtype)


def scalar_cast(v: Any, kind: str) -> Any:
    """A scalar conversion: `int` truncates toward zero, `float`, or `bool`."""
    if kind == "int":
        return int(v)
    return float(v) if kind == "float" else bool(v)


# -- reductions and broadcasts ----------------------------------------------------------------

def reduce(x: torch.Tensor, op: str, dim: int, valid: Sequence[int] | None = None) -> torch.Tensor:
    """Reduce `dim` keeping it as size 1; only the valid region takes part."""
    out_shape = list(x.shape)
    out_shape[dim] = 1
    src = x[tuple(slice(0, v) for v in valid)] if valid is not None else x
    if op in ("argmax", "argmin"):
        r = getattr(src, op)(dim=dim, keepdim=True).to(torch.int32)
        dtype = torch.int32
    elif op in ("max", "min"):
        r = getattr(src, f"a{op}")(dim=dim, keepdim=True)
        dtype = x.dtype
    else:
        r = getattr(src, op)(dim=dim, keepdim=True, dtype=torch.float32 if x.is_floating_point() else None)
        dtype = x.dtype
    out = torch.zeros(out_shape, dtype=dtype)
    out[tuple(slice(0, n) for n in r.shape)] = r.to(dtype)
    return out


def expand(op: str, lhs: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor:
    """Combine every element of lhs with its row's / column's value in rhs."""
    if op == "expand":
        return rhs.expand_as(lhs).clone()
    if op == "expdif":
        return torch.exp(lhs - rhs).to(lhs.dtype)
    name = {"max": "maximum", "min": "minimum"}.get(op, op)
    return binary(name, lhs, rhs)


def prelu(x: torch.Tensor, slope: torch.Tensor) -> torch.Tensor:
    return torch.where(x >= 0, x, slope * x)


# -- generated values -------------------------------------------------------------------------

def arange(start: int, shape: Sequence[int], dtype: torch.dtype, descending: bool) -> torch.Tensor:
    """start, start ± 1, ... along the last axis (leading dims are 1)."""
    steps = torch.arange(shape[-1], dtype=torch.int64)
    return (int(start) + (-steps if descending else steps)).reshape(list(shape)).to(dtype)


def tri(diagonal: int, shape: Sequence[int], valid: Sequence[int] | None, dtype: torch.dtype,
        upper: bool) -> torch.Tensor:
    """1 inside the triangle (lower: j <= i + diagonal; upper: j >= i + diagonal), written over
    the valid region of a zero tile."""
    rows, cols = shape
    i = torch.arange(rows).unsqueeze(1)
    j = torch.arange(cols).unsqueeze(0)
    mask = (j >= i + int(diagonal)) if upper else (j <= i + int(diagonal))
    out = torch.zeros(rows, cols, dtype=dtype)
    vr, vc = valid if valid is not None else shape
    out[:vr, :vc] = mask[:vr, :vc].to(dtype)
    return out


# -- matmul -----------------------------------------------------------------------------------

def _acc_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.int32 if dtype == torch.int8 else torch.float32


def _mm(a: torch.Tensor, b: torch.Tensor, a_trans: bool, b_trans: bool) -> torch.Tensor:
    acc = _acc_dtype(a.dtype)
    if a_trans:
        a = a.transpose(-1, -2)
    if b_trans:
        b = b.transpose(-1, -2)
    if acc == torch.int32:  # exact integer products: accumulate in int64, then wrap to int32
        return _wrap(torch.matmul(a.to(torch.int64), b.to(torch.int64)), torch.int32)
    return torch.matmul(a.to(torch.float32), b.to(torch.float32))


def matmul(a, b, out_dtype: torch.dtype | None = None, a_trans=False, b_trans=False) -> torch.Tensor:
    r = _mm(a, b, a_trans, b_trans)
    return r if out_dtype is None else r.to(out_dtype)


def matmul_acc(acc, a, b, a_trans=False, b_trans=False, init_cond: bool | None = None) -> torch.Tensor:
    r = _mm(a, b, a_trans, b_trans)
    if init_cond:
        return r.to(acc.dtype)
    return (acc.to(r.dtype) + r).to(acc.dtype)


def matmul_bias(a, b, bias) -> torch.Tensor:
    return (_mm(a, b, False, False) + bias.to(_acc_dtype(a.dtype))).to(bias.dtype)


# -- windows, layout, memory ------------------------------------------------------------------

def _window(offsets: Sequence[int], extents: Sequence[int]) -> tuple[slice, ...]:
    return tuple(slice(o, o + e) for o, e in zip(offsets, extents))


def load(t: torch.Tensor, offsets, shapes, valid=None, clamp: bool = False) -> torch.Tensor:
    """A tile of `shapes` holding the valid part of the window at offsets (zeros elsewhere)."""
    ext = list(valid if valid is not None else shapes)
    if clamp:
        ext = [max(0, min(e, n - o)) for e, n, o in zip(ext, t.shape, offsets)]
    out = torch.zeros(list(shapes), dtype=t.dtype)
    out[_window([0] * len(ext), ext)] = t[_window(offsets, ext)]
    return out


def store(tile: torch.Tensor, offsets, out: torch.Tensor, extent, atomic_add: bool = False) -> torch.Tensor:
    """Write the tile's first `extent` cells into `out` at offsets, in place; returns out (a
    tile of lower rank than `out` fills its trailing dims)."""
    lead = [1] * (len(offsets) - len(extent))
    src = tile[_window([0] * len(extent), extent)].reshape(lead + [int(e) for e in extent])
    extent = lead + list(extent)
    if src.dtype != out.dtype:  # the store converts, with tile.cast's default rules
        src = cast(src, out.dtype)
    if atomic_add:
        out[_window(offsets, extent)] += src
    else:
        out[_window(offsets, extent)] = src
    return out


def assemble(target: torch.Tensor, source: torch.Tensor, offset, atomic_add: bool = False,
             valid=None) -> torch.Tensor:
    """`source` (its `valid` region, clipped to `target`) written into `target` at `offset`,
    converted to its dtype (a source of lower rank fills the trailing dims). A tensor source's
    valid region is the one `slice_` recorded on it."""
    valid = valid if valid is not None else getattr(source, VALID_ATTR, None)
    if valid is not None:
        keep = [max(0, min(int(v), n, t - int(o)))
                for v, n, t, o in zip(valid, source.shape, target.shape[target.dim() - source.dim():],
                                      list(offset)[len(offset) - source.dim():])]
        source = source[_window([0] * len(keep), keep)]
    source = source.reshape([1] * (target.dim() - source.dim()) + list(source.shape))
    if source.dtype != target.dtype:
        source = cast(source, target.dtype)
    if atomic_add:
        target[_window(offset, source.shape)] += source
    else:
        target[_window(offset, source.shape)] = source
    return target


def expand_clone(source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """`target` overwritten with `source` broadcast to its shape; returns target."""
    target.copy_(source.expand(target.shape))
    return target


def pad_fill(dtype: torch.dtype, pad: str) -> float | int:
    if pad == "zero":
        return 0
    if dtype.is_floating_point:
        return math.inf if pad == "max" else -math.inf
    info = torch.iinfo(dtype)
    return info.max if pad == "max" else info.min


def fillpad(x: torch.Tensor, valid, pad: str = "zero") -> torch.Tensor:
    out = torch.full_like(x, pad_fill(x.dtype, pad))
    w = _window([0] * len(valid), valid)
    out[w] = x[w]
    return out


def fillpad_expand(x: torch.Tensor, valid, shape, pad: str = "zero") -> torch.Tensor:
    out = torch.full(list(shape), pad_fill(x.dtype, pad), dtype=x.dtype)
    w = _window([0] * len(valid), valid)
    out[w] = x[w]
    return out


def slice_(x: torch.Tensor, shape, offset, valid=None, drop_dims=(), pad: str | None = None,
           clamp: bool = False) -> torch.Tensor:
    ext = [min(s, n - o) for s, n, o in zip(shape, x.shape, offset)] if clamp else list(shape)
    view = x[_window(offset, ext)]
    if valid is not None or pad is not None or list(ext) != list(shape):
        out = torch.full(list(shape), pad_fill(x.dtype, pad or "zero"), dtype=x.dtype)
        keep = [min(v, e) for v, e in zip(valid or ext, ext)]
        w = _window([0] * len(keep), keep)
        out[w] = view[w]
        view = out
        if valid is not None and not drop_dims:
            setattr(view, VALID_ATTR, tuple(keep))
    for d in sorted(drop_dims, reverse=True):
        view = view.squeeze(d)
    return view


def read(x: torch.Tensor, idx: Sequence[int]):
    v = x.reshape(-1)[idx[0]] if len(idx) == 1 and x.dim() != 1 else x[tuple(idx)]
    return v.item()


def array_update(arr: tuple, index, value) -> tuple:
    """An on-core array (a tuple) with element `index` replaced by `value`."""
    i = int(index)
    return arr[:i] + (value,) + arr[i + 1:]


def write(x: torch.Tensor, idx: Sequence[int], value) -> torch.Tensor:
    if len(idx) == 1 and x.dim() != 1:
        x.view(-1)[idx[0]] = value
    else:
        x[tuple(idx)] = value
    return x


def halve(x: torch.Tensor, mode: str, lane: int) -> torch.Tensor:
    """The lane's half of x along the split axis (UP_DOWN: rows, LEFT_RIGHT: cols)."""
    if mode == "NONE":
        return x
    axis = 0 if mode == "UP_DOWN" else 1
    n = x.shape[axis] // 2
    return x.narrow(axis, lane * n, n).clone()


# -- launch context, pipes, groups ------------------------------------------------------------

class Context(threading.local):
    """Per-thread launch state: block index / count and the AIV lane."""

    def __init__(self) -> None:
        self.block_idx, self.block_num, self.subblock_idx, self.lanes = 0, 1, 0, 1
        self.split = "NONE"

    @contextmanager
    def block(self, idx: int, num: int):
        saved = self.block_idx, self.block_num
        self.block_idx, self.block_num = idx, num
        try:
            yield
        finally:
            self.block_idx, self.block_num = saved

    @contextmanager
    def lane(self, idx: int, mode: str):
        saved = self.subblock_idx, self.split
        self.subblock_idx, self.split = idx, mode
        try:
            yield
        finally:
            self.subblock_idx, self.split = saved


class Pipes:
    """AIC <-> AIV FIFOs keyed by pipe id; one queue per AIV lane and direction."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self._queues, self._lock = ctx, {}, threading.Lock()
        self._gathers: dict[Any, torch.Tensor] = {}

    def _q(self, key) -> queue.Queue:
        with self._lock:
            return self._queues.setdefault(key, queue.Queue())

    def _get(self, key) -> torch.Tensor:
        try:
            return self._q(key).get(timeout=PIPE_TIMEOUT_S)
        except queue.Empty:
            raise RuntimeError(f"pipe {key} stayed empty for {PIPE_TIMEOUT_S}s: no matching push") from None

    def push_to_aiv(self, tile: torch.Tensor, split: int, id: int | None) -> None:
        for lane in range(self.ctx.lanes):
            part = tile if split == 0 else halve(tile, "UP_DOWN" if split in (1, 3) else "LEFT_RIGHT", lane)
            self._q(("c2v", id or 0, lane)).put(part.clone())

    def pop_from_aic(self, id: int | None) -> torch.Tensor:
        return self._get(("c2v", id or 0, self.ctx.subblock_idx))

    def push_to_aic(self, tile: torch.Tensor, split: int, id: int | None) -> None:
        self._q(("v2c", id or 0, self.ctx.subblock_idx)).put((split, tile.clone()))

    def pop_from_aiv(self, id: int | None) -> torch.Tensor:
        parts = [self._get(("v2c", id or 0, lane)) for lane in range(self.ctx.lanes)]
        split = parts[0][0]
        if split == 0:
            return parts[0][1]
        return torch.cat([p[1] for p in parts], dim=0 if split in (1, 3) else 1)

    def gather(self, site: str, x: torch.Tensor) -> torch.Tensor:
        """aic_gather inside a lane loop: each lane writes its half of one shared buffer."""
        mode, lane = self.ctx.split, self.ctx.subblock_idx
        if mode == "NONE":
            return x
        axis = 0 if mode == "UP_DOWN" else 1
        if lane == 0 or site not in self._gathers:
            shape = list(x.shape)
            shape[axis] *= 2
            self._gathers[site] = torch.zeros(shape, dtype=x.dtype)
        buf = self._gathers[site]
        buf.narrow(axis, lane * x.shape[axis], x.shape[axis]).copy_(x)
        return buf


def co_run(ctx: Context, launches: Sequence[tuple[Callable[[], Any], int]]) -> list[Any]:
    """Run a Group's kernels concurrently: (thunk, lanes) each; AIV kernels get 2 lanes.
    Returns each kernel's result (its lane 0's)."""
    errors: list[BaseException] = []
    results: list[Any] = [None] * len(launches)
    block = ctx.block_idx, ctx.block_num

    def run(k: int, fn: Callable[[], Any], lane: int) -> None:
        ctx.block_idx, ctx.block_num = block
        ctx.subblock_idx, ctx.lanes = lane, 2
        try:
            result = fn()
        except BaseException as e:  # re-raised in the caller's thread below
            errors.append(e)
            return
        if lane == 0:
            results[k] = result

    threads = [threading.Thread(target=run, args=(k, fn, lane))
               for k, (fn, lanes) in enumerate(launches) for lane in range(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
