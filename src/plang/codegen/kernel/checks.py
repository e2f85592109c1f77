"""Safety checks in generated kernels: bounds checks of DDR transfers and the cancel word
(`abi.py`, *Cancellation and checks*).

A check runs once per transfer (a handful of scalar compares, never per element): every
axis's offset must be >= 0 and, unless the op clamps, offset + extent must not pass the
tensor's runtime extent. A failing check records its site, axis and values in the launch
context, sets the cancel word, and the transfer moves nothing; `Kernel.launch` raises the
record as `BoundsError` at the user's line.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from ... import ir as pir
from .abi import CONTEXT_FIELDS, STATUS_BOUNDS, CheckSite
from .context import LowerContext, field_address
from .mlir import arith, ir, llvm, scf

_FIELD = {name: CONTEXT_FIELDS.index(name) for name in
          ("cancel", "status", "check_site", "check_axis", "check_offset", "check_extent", "check_dim")}


def _i64(v: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), v)


def cancel_pointer(lc: LowerContext) -> ir.Value:
    """The cancel pointer, loaded once at the kernel's entry (it never changes in a launch;
    loaded in a loop, LLVM would reload it after every store it cannot tell apart)."""
    if lc.cancel_word is None:
        with ir.InsertionPoint.at_block_begin(lc.kb.entry):
            lc.cancel_word = lc.context_pointer(_FIELD["cancel"])
    return lc.cancel_word


def cancelled(lc: LowerContext) -> ir.Value:
    """i1: the launch's cancel word is set (a volatile read: never hoisted out of a loop)."""
    word = llvm.load(ir.IntegerType.get_signless(64), cancel_pointer(lc), volatile_=True)
    return arith.cmpi(arith.CmpIPredicate.ne, word, _i64(0))


def running(lc: LowerContext) -> ir.Value:
    """i1: the launch is not cancelled."""
    return arith.xori(cancelled(lc), arith.constant(ir.IntegerType.get_signless(1), 1))


def cancel(lc: LowerContext) -> None:
    """Set the launch's cancel word."""
    llvm.store(_i64(1), cancel_pointer(lc), volatile_=True)


def cancel_unless_ok(lc: LowerContext, rc: ir.Value) -> None:
    """Set the cancel word when a pipe call's i32 return code is nonzero."""
    bad = arith.cmpi(arith.CmpIPredicate.ne, rc, arith.constant(rc.type, 0))
    op = scf.IfOp(bad, [], has_else=False)
    with ir.InsertionPoint(op.then_block):
        cancel(lc)
        scf.yield_([])


def _site(lc: LowerContext, operand: pir.Var) -> int:
    call = lc.call
    t = operand.type
    kind = "tile" if isinstance(t, pir.TileType) else "array" if isinstance(t, pir.ArrayType) else "tensor"
    shape = f"[{t.extent}]" if isinstance(t, pir.ArrayType) else pir.types.format_shape(t.shape)
    span = call.span.fields if call.span.is_known else ()
    lc.check_sites.append(CheckSite(call.op.name, kind, operand.name, shape, span))
    return len(lc.check_sites) - 1


def check_bounds(lc: LowerContext, tensor: pir.Var, offsets: Sequence[ir.Value],
                 extents: Sequence[ir.Value], dims: Sequence[ir.Value], clamp: bool = False) -> ir.Value:
    """i1: the window `offsets` + `extents` of `tensor` (a DDR tensor, or a tile for the
    on-chip windows of `tile.slice` / `tile.assemble`) lies inside its extents `dims` on every
    axis (with `clamp` only the offsets are checked), or (without `clamp`) is empty: it moves
    nothing, e.g. a split lane's share of a narrow valid region; when not, the failure is recorded (see
    module doc)."""
    idx = ir.IndexType.get()
    zero = arith.constant(idx, 0)
    nonempty = arith.constant(ir.IntegerType.get_signless(1), 1)
    for ext in () if clamp else extents:
        nonempty = arith.andi(nonempty, arith.cmpi(arith.CmpIPredicate.sgt, ext, zero))
    bad_axes = []
    for off, ext, dim in zip(offsets, extents, dims):
        bad = arith.cmpi(arith.CmpIPredicate.slt, off, zero)
        if not clamp:
            bad = arith.ori(bad, arith.cmpi(arith.CmpIPredicate.sgt, arith.addi(off, ext), dim))
        bad_axes.append(arith.andi(bad, nonempty))
    any_bad = bad_axes[0]
    for bad in bad_axes[1:]:
        any_bad = arith.ori(any_bad, bad)
    site = _site(lc, tensor)
    op = scf.IfOp(any_bad, [], has_else=False)
    with ir.InsertionPoint(op.then_block):
        _record(lc, site, bad_axes, offsets, extents, dims)
        scf.yield_([])
    return arith.xori(any_bad, arith.constant(ir.IntegerType.get_signless(1), 1))


def _record(lc: LowerContext, site: int, bad_axes: list, offsets, extents, dims) -> None:
    """Store the first failing axis's values (unless a failure is recorded already) and cancel."""
    i64 = ir.IntegerType.get_signless(64)
    last = len(bad_axes) - 1
    axis = arith.constant(ir.IndexType.get(), last)
    off, ext, dim = offsets[last], extents[last], dims[last]
    for k in range(last - 1, -1, -1):  # the lowest failing axis wins
        b = bad_axes[k]
        axis = arith.select(b, arith.constant(ir.IndexType.get(), k), axis)
        off, ext, dim = (arith.select(b, x, y) for x, y in ((offsets[k], off), (extents[k], ext),
                                                              (dims[k], dim)))
    status = field_address(lc.ctx_ptr, _FIELD["status"])
    first = arith.cmpi(arith.CmpIPredicate.eq, llvm.load(i64, status), _i64(0))
    op = scf.IfOp(first, [], has_else=False)
    with ir.InsertionPoint(op.then_block):
        llvm.store(_i64(STATUS_BOUNDS), status)
        llvm.store(_i64(site), field_address(lc.ctx_ptr, _FIELD["check_site"]))
        for name, v in (("check_axis", axis), ("check_offset", off), ("check_extent", ext),
                        ("check_dim", dim)):
            llvm.store(arith.index_cast(i64, v), field_address(lc.ctx_ptr, _FIELD[name]))
        scf.yield_([])
    cancel(lc)


@contextmanager
def only_if(ok: ir.Value) -> Iterator[None]:
    """Build the block's ops under `scf.if ok` (a checked transfer that must not run)."""
    op = scf.IfOp(ok, [], has_else=False)
    with ir.InsertionPoint(op.then_block):
        yield
        scf.yield_([])


def check_tile_window(lc: LowerContext, tile: pir.Expr, offsets: Sequence[ir.Value],
                      extents: Sequence[ir.Value], dims: Sequence[int]) -> ir.Value:
    """`check_bounds` of an on-chip window (row and column offsets / extents) of `tile`,
    whose folded (rows, cols) are `dims`; i1: the window may be moved (the check passed and
    the launch runs on: a failed check cancels it)."""
    if isinstance(tile, pir.Var):
        check_bounds(lc, tile, offsets, extents, [lc.kb.idx(d) for d in dims])
    return running(lc)
