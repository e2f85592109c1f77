"""On-core arrays (`pl.array.create`, `arr[i]`, `arr[i] = v`): a small scratch buffer of the
array's extent. `array.update_element` is functional in the IR (a new array value), so it
copies the array into a fresh buffer before storing: an older value stays readable."""

from __future__ import annotations

from ... import ir as pir
from ...dtypes import BOOL, DataType
from .builder import mlir_type
from .context import LowerContext
from .lower_scalar import convert
from .mlir import arith, ir, memref


def new_array(lc: LowerContext, t: pir.ArrayType) -> ir.Value:
    """The buffer of an array value of type `t` (contents unset)."""
    return lc.kb.alloc_scratch(mlir_type(t.dtype), t.extent)


def copy_array(lc: LowerContext, t: pir.ArrayType, src: ir.Value, dst: ir.Value) -> None:
    for i in range(t.extent):
        memref.store(memref.load(src, [lc.kb.idx(i)]), dst, [lc.kb.idx(i)])


def lower_create(lc: LowerContext, short: str, a: dict) -> ir.Value:
    """A zero-filled array (as the orchestration's arrays start)."""
    t = lc.call.type
    buf = new_array(lc, t)
    zero = lc.kb.const_of(mlir_type(t.dtype), 0)
    for i in range(t.extent):
        memref.store(zero, buf, [lc.kb.idx(i)])
    return buf


def lower_get_element(lc: LowerContext, short: str, a: dict) -> tuple[ir.Value, DataType]:
    dtype = a["array"].type.dtype
    v = memref.load(lc._bound(a["array"]), [lc.index(a["index"])])
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
    memref.store(v, new, [lc.index(a["index"])])
    return new


def register(table: dict) -> None:
    table["array.create"] = lower_create
    table["array.get_element"] = lower_get_element
    table["array.update_element"] = lower_update_element
