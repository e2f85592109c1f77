"""On-core arrays (`pl.array.create`, `arr[i]`, `arr[i] = v`): a small scratch buffer of the
array's extent. `array.update_element` is functional in the IR (a new array value), so it
copies the array into a fresh buffer before storing: an older value stays readable. A
runtime index outside the array is a `BoundsError` (nothing is read or written there)."""

from __future__ import annotations

from ... import ir as pir
from ...dtypes import BOOL, DataType
from .builder import mlir_type
from .checks import check_bounds
from .context import LowerContext
from .lower_scalar import convert
from .mlir import arith, ir, memref, scf


def new_array(lc: LowerContext, t: pir.ArrayType) -> ir.Value:
    """The buffer of an array value of type `t` (contents unset)."""
    return lc.kb.alloc_scratch(mlir_type(t.dtype), t.extent)


def copy_array(lc: LowerContext, t: pir.ArrayType, src: ir.Value, dst: ir.Value) -> None:
    with lc.kb.loop(0, t.extent) as loop:
        i = loop.induction_variable
        memref.store(memref.load(src, [i]), dst, [i])


def lower_create(lc: LowerContext, short: str, a: dict) -> ir.Value:
    """A zero-filled array (as the orchestration's arrays start)."""
    t = lc.call.type
    buf = new_array(lc, t)
    zero = lc.kb.const_of(mlir_type(t.dtype), 0)
    with lc.kb.loop(0, t.extent) as loop:
        memref.store(zero, buf, [loop.induction_variable])
    return buf


def _checked_index(lc: LowerContext, a: dict) -> tuple[ir.Value, ir.Value]:
    """(index, whether it lies inside the array; when not, the failure is recorded)."""
    i = lc.index(a["index"])
    return i, check_bounds(lc, a["array"], [i], [lc.kb.idx(1)], [lc.kb.idx(a["array"].type.extent)])


def lower_get_element(lc: LowerContext, short: str, a: dict) -> tuple[ir.Value, DataType]:
    dtype = a["array"].type.dtype
    buf = lc._bound(a["array"])
    i, ok = _checked_index(lc, a)
    read = scf.IfOp(ok, [ir.MemRefType(buf.type).element_type], has_else=True)
    with ir.InsertionPoint(read.then_block):
        scf.yield_([memref.load(buf, [i])])
    with ir.InsertionPoint(read.else_block):
        scf.yield_([lc.kb.const_of(mlir_type(dtype), 0)])
    v = read.result
    if dtype is BOOL:
        return arith.cmpi(arith.CmpIPredicate.ne, v, arith.constant(v.type, 0)), BOOL
    return v, dtype


def lower_update_element(lc: LowerContext, short: str, a: dict) -> ir.Value:
    t = a["array"].type
    new = new_array(lc, t)
    copy_array(lc, t, lc._bound(a["array"]), new)
    v = lc.scalar(a["value"], t.dtype, storage=True)
    if t.dtype is BOOL:
        v = arith.extui(ir.IntegerType.get_signless(8), convert(v, t.dtype, BOOL))
    i, ok = _checked_index(lc, a)
    write = scf.IfOp(ok)
    with ir.InsertionPoint(write.then_block):
        memref.store(v, new, [i])
        scf.yield_([])
    return new


def register(table: dict) -> None:
    table["array.create"] = lower_create
    table["array.get_element"] = lower_get_element
    table["array.update_element"] = lower_update_element
