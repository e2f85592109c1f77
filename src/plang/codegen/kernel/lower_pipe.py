"""Cross-core pipe ops (`tpush_*`, `tpop_*`, `tfree_*`) as calls through the launch context's
`PipeApi` (see `abi.py` for the C ABI, pipe ids and how split tiles are divided). A nonzero
return code (a timeout, an aborted Group) sets the launch's cancel word, so the kernel stores
nothing of what it popped and leaves its loops.

The explicit cross-core events (`system.sync_set` / `sync_wait`, the reference's FFTS mode 2
between the cube and its two AIV lanes) are tokens on pipes of their own, one per event id
and direction: an AIV lane's set releases the cube's wait once both lanes have set it, the
cube's set releases each lane's wait."""

from __future__ import annotations

from ... import ir as pir
from ...dtypes import INT64
from .abi import CONTEXT_FIELDS, EVENT_CROSSING, PIPE_API_FIELDS, TO_AIC, TO_AIV, pipe_id
from .builder import TileBuf, geometry, ptr_type
from .checks import cancel_unless_ok
from .context import LowerContext, field_address
from .lower_layout import window_reader, write_window
from .mlir import arith, ir, llvm, memref
from .vectors import LazyTile, full, map_chunks

_LANES = 2


def _i64(lc: LowerContext, v: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), v)


def _api(lc: LowerContext, name: str) -> ir.Value:
    api = lc.context_pointer(CONTEXT_FIELDS.index("pipe_api"))
    return llvm.load(ptr_type(), field_address(api, PIPE_API_FIELDS.index(name)))


def _pipe(lc: LowerContext, ident: int, direction: int, lane, nbytes: int) -> ir.Value:
    """The pipe handle for (crossing, direction, lane); `lane` is an int or an index Value."""
    i64 = ir.IntegerType.get_signless(64)
    if isinstance(lane, int):
        pid = _i64(lc, pipe_id(ident, direction, lane))
    else:
        pid = arith.addi(_i64(lc, pipe_id(ident, direction, 0)), arith.index_cast(i64, lane))
    pipes = lc.context_pointer(CONTEXT_FIELDS.index("pipes"))
    return llvm.call(ptr_type(), [_api(lc, "get"), pipes, pid, _i64(lc, nbytes), _i64(lc, 0)],
                     [], [])


def _address(lc: LowerContext, t: TileBuf, element_offset: int = 0) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    base = arith.index_cast(i64, memref.extract_aligned_pointer_as_index(t.buf))
    if element_offset:
        base = arith.addi(base, _i64(lc, element_offset * t.dtype.itemsize))
    return llvm.inttoptr(ptr_type(), base)


def _transfer(lc: LowerContext, fn: str, pipe: ir.Value, t: TileBuf, rows: int, row0: int = 0) -> None:
    nbytes = rows * t.pitch * t.dtype.itemsize
    i32 = ir.IntegerType.get_signless(32)
    cancel_unless_ok(lc, llvm.call(i32, [_api(lc, fn), pipe, _address(lc, t, row0 * t.pitch),
                                         _i64(lc, nbytes)], [], []))


def _free(lc: LowerContext, pipe: ir.Value) -> None:
    cancel_unless_ok(lc, llvm.call(ir.IntegerType.get_signless(32), [_api(lc, "free"), pipe], [], []))


def _halves(lc: LowerContext, t: TileBuf, split: int) -> list[tuple[TileBuf, int, int]]:
    """Per lane: (buffer, first row, rows) of the lane's part of `t`. Halves are rounded up,
    so lane 1 is one short of an odd extent (the odd codes 3 / 4); left-right halves are
    copied into their own buffers."""
    if split == 0:
        return [(t, 0, t.rows)] * _LANES
    if split in (1, 3):
        half = -(-t.rows // 2)
        return [(t, 0, half), (t, half, t.rows - half)]
    if split in (2, 4):
        return [(lc.kb.alloc_tile(t.dtype, t.rows, -(-t.cols // 2)), 0, t.rows) for _ in range(_LANES)]
    raise lc.error(f"{lc.call.op.name}: split code {split} is not supported by the kernel backend")


def _slot_bytes(t: TileBuf, split: int) -> int:
    """Bytes of one lane's slot for tile `t` divided by `split` (the larger half)."""
    if split in (2, 4):
        return t.rows * geometry(t.dtype, -(-t.cols // 2))[1] * t.dtype.itemsize
    rows = -(-t.rows // 2) if split in (1, 3) else t.rows
    return rows * t.pitch * t.dtype.itemsize


def _copy_cols(lc: LowerContext, src: TileBuf, dst: TileBuf, col0: int, to_half: bool) -> None:
    """Copy the column half starting at `col0` between a full tile and its half buffer."""
    kb = lc.kb
    zero = kb.idx(0)
    if to_half:
        reader = window_reader(lc, src, zero, kb.idx(col0), dst.width)
        lazy = LazyTile(dst.dtype, dst.rows, dst.cols, dst.pitch, dst.width, dst.valid, reader)
        map_chunks(kb, dst, [full(lazy)], lambda v: v[0], convert=False)
    else:
        write_window(lc, dst, src, zero, kb.idx(col0))


def _split(a: dict) -> int:
    s = a.get("split")
    return int(getattr(s, "value", s) or 0)


def _ident(a: dict) -> int:
    return int(a.get("id") or 0)


def lower_push_to_aiv(lc: LowerContext, short: str, a: dict):
    t = lc.tile(a["tile"])
    split = _split(a)
    for lane, (buf, row0, rows) in enumerate(_halves(lc, t, split)):
        if split in (2, 4):
            _copy_cols(lc, t, buf, lane * buf.cols, to_half=True)
        _transfer(lc, "push", _pipe(lc, _ident(a), TO_AIV, lane, _slot_bytes(t, split)), buf, rows, row0)
    return None


def lower_pop_from_aic(lc: LowerContext, short: str, a: dict) -> TileBuf:
    out = lc.result_tile()
    lane = lc.context_field(CONTEXT_FIELDS.index("subblock_idx"))
    nbytes = out.rows * out.pitch * out.dtype.itemsize
    _transfer(lc, "pop", _pipe(lc, _ident(a), TO_AIV, lane, nbytes), out, out.rows)
    return out


def lower_free_to_aic(lc: LowerContext, short: str, a: dict):
    t = lc.tile(a["tile"])
    lane = lc.context_field(CONTEXT_FIELDS.index("subblock_idx"))
    _free(lc, _pipe(lc, _ident(a), TO_AIV, lane, t.rows * t.pitch * t.dtype.itemsize))
    return None


def lower_push_to_aic(lc: LowerContext, short: str, a: dict):
    t = lc.tile(a["tile"])
    lane = lc.context_field(CONTEXT_FIELDS.index("subblock_idx"))
    nbytes = t.rows * t.pitch * t.dtype.itemsize
    _transfer(lc, "push", _pipe(lc, _ident(a), TO_AIC, lane, nbytes), t, t.rows)
    return None


def lower_pop_from_aiv(lc: LowerContext, short: str, a: dict) -> TileBuf:
    out = lc.result_tile()
    split = _split(a)
    parts = _halves(lc, out, split)
    if split == 0:
        parts = [parts[0], (lc.kb.alloc_tile(out.dtype, out.rows, out.cols), 0, out.rows)]
    for lane, (buf, row0, rows) in enumerate(parts):
        _transfer(lc, "pop", _pipe(lc, _ident(a), TO_AIC, lane, _slot_bytes(out, split)), buf, rows, row0)
        if split in (2, 4):
            _copy_cols(lc, buf, out, lane * buf.cols, to_half=False)
    return out


def lower_free_to_aiv(lc: LowerContext, short: str, a: dict):
    t = lc.tile(a["tile"])
    for lane in range(_LANES):
        _free(lc, _pipe(lc, _ident(a), TO_AIC, lane, _slot_bytes(t, _split(a))))
    return None


TOKEN_BYTES = 8


def _event(lc: LowerContext, a: dict, signal: bool) -> None:
    """Set (`signal`) or wait for event `event_id` between the cube and its AIV lanes."""
    name = lc.call.op.name
    if signal and a.get("ffts_mode") not in (None, 2):
        raise lc.error(f"{name}: ffts_mode={a['ffts_mode']} (a sync among cores of one type) is not "
                       "supported on the simulated chip; mode 2 orders the cube and its AIV lanes")
    ident = EVENT_CROSSING + int(a["event_id"])
    token = TileBuf(lc.kb.alloc_scratch(ir.IntegerType.get_signless(64), 1), INT64, 1, 1, 1, 1,
                    (lc.kb.idx(1), lc.kb.idx(1)))
    on_cube = lc.function.func_type is pir.FunctionType.AIC
    direction = TO_AIV if on_cube == signal else TO_AIC
    lanes = range(_LANES) if on_cube else [lc.context_field(CONTEXT_FIELDS.index("subblock_idx"))]
    for lane in lanes:
        pipe = _pipe(lc, ident, direction, lane, TOKEN_BYTES)
        if signal:
            _transfer(lc, "push", pipe, token, 1)
        else:
            _transfer(lc, "pop", pipe, token, 1)
            _free(lc, pipe)


def register(table: dict) -> None:
    table["system.sync_set"] = lambda lc, short, a: _event(lc, a, signal=True)
    table["system.sync_wait"] = lambda lc, short, a: _event(lc, a, signal=False)
    table["tile.tpush_to_aiv"] = lower_push_to_aiv
    table["tile.tpop_from_aic"] = lower_pop_from_aic
    table["tile.tfree_to_aic"] = lower_free_to_aic
    table["tile.tpush_to_aic"] = lower_push_to_aic
    table["tile.tpop_from_aiv"] = lower_pop_from_aiv
    table["tile.tfree_to_aiv"] = lower_free_to_aiv
