"""`KernelBuilder`: a thin layer over the MLIR builders that lowering code shares.

It owns the module and the kernel function, maps plang dtypes to MLIR types, creates
constants and loops, and allocates tile buffers once at function entry (64-byte aligned
stack buffers: never inside a loop, where `memref.alloca` would grow the stack every trip;
`alloc_heap` for the few too large for the stack: the runtime's per-thread scratch, taken at
entry and given back by `finish`).

A tile lives in a `TileBuf`: a flat buffer of `rows * pitch` elements whose row pitch is
the column count rounded up to the tile's vector width, so elementwise work streams whole
vectors with no tails; the padding columns hold don't-care values.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

from ...dtypes import BF16, BOOL, FP16, FP32, INDEX, DataType
from . import isa
from .abi import CONTEXT_FIELDS
from .mlir import arith, builtin, func, ir, llvm, memref, scf

ALIGN = 64


def mlir_type(dtype: DataType) -> ir.Type:
    """Storage type of `dtype` (signless integers; BOOL is one byte holding 0 or 1)."""
    if dtype is FP32:
        return ir.F32Type.get()
    if dtype is FP16:
        return ir.F16Type.get()
    if dtype is BF16:
        return ir.BF16Type.get()
    if dtype is INDEX:
        return ir.IndexType.get()
    if dtype.is_int or dtype is BOOL:
        return ir.IntegerType.get_signless(dtype.bits)
    raise TypeError(f"dtype {dtype.name} has no kernel storage type")


def compute_dtype(dtype: DataType) -> DataType:
    """The dtype arithmetic runs in: half floats compute in FP32 and round per op."""
    return FP32 if dtype in (FP16, BF16) else dtype


def vector_width(dtype: DataType, cols: int) -> int:
    """Lanes per chunk for a tile of `cols` columns: `isa.chunk_bytes()` worth of the compute
    type, counting types narrower than 32 bits as 32 (so tiles of every dtype up to 32 bits
    share one width and elementwise ops between them line up), shrunk to the next power of
    two >= cols for narrow tiles."""
    lanes = isa.chunk_bytes() // max(4, compute_dtype(dtype).itemsize)
    w = 1
    while w < cols and w < lanes:
        w *= 2
    return w


def geometry(dtype: DataType, cols: int) -> tuple[int, int]:
    """(vector width, row pitch) of a tile with `cols` columns."""
    width = vector_width(dtype, cols)
    return width, -(-cols // width) * width


@dataclass
class TileBuf:
    """A tile's storage: `buf` is `memref<rows*pitch x T>`; `valid` = (rows, cols) as index
    Values holding the valid region."""

    buf: ir.Value
    dtype: DataType
    rows: int
    cols: int
    pitch: int
    width: int
    valid: tuple[ir.Value, ir.Value]

    @property
    def size(self) -> int:
        return self.rows * self.pitch


class KernelBuilder:
    """Builds one kernel function inside a fresh module (call under the MLIR context)."""

    def __init__(self, name: str, arg_types: Sequence[ir.Type], footprint: int | None = None) -> None:
        self.name = name
        self.footprint = footprint  # bytes of all the kernel's tensors (None: not static)
        self.module = ir.Module.create()
        self.index = ir.IndexType.get()
        with ir.InsertionPoint(self.module.body):
            self.func = func.FuncOp(name, ir.FunctionType.get(list(arg_types), []))
        self.func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        # Never inlined into its C-interface wrappers: LLVM would otherwise compile the whole
        # body up to three times (softmax 4096x1024: 105 -> 45 ms to compile).
        self.func.attributes["llvm.passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
        self.entry = self.func.add_entry_block()
        self.args = list(self.entry.arguments)
        self.nontemporal = False  # some store is non-temporal (see `streaming_store`)
        self.heap: list[ir.Value] = []  # buffers `finish` frees
        self.caches: dict = {}  # per-call caches by key (`pack_cache.PanelCache`)
        self.counted: dict[ir.Value, tuple] = {}  # a counted scf.while's iv: (op, (lo, hi, step))

    # -- constants ----------------------------------------------------------------------
    def idx(self, value: int) -> ir.Value:
        return arith.constant(self.index, value)

    def const(self, dtype: DataType, value) -> ir.Value:
        t = mlir_type(dtype)
        if dtype.is_float:
            return arith.constant(t, float(value))
        if dtype is BOOL:
            return arith.constant(t, int(bool(value)))
        return arith.constant(t, _wrap_int(int(value), dtype.bits))

    def const_of(self, t: ir.Type, value) -> ir.Value:
        """A constant of MLIR scalar type `t` (float or integer)."""
        if isinstance(t, ir.IntegerType):
            return arith.constant(t, _wrap_int(int(value), t.width))
        return arith.constant(t, float(value))

    # -- buffers ------------------------------------------------------------------------
    def alloc_tile(self, dtype: DataType, rows: int, cols: int,
                   valid: tuple[ir.Value, ir.Value] | None = None) -> TileBuf:
        """A tile buffer allocated at function entry."""
        width, pitch = geometry(dtype, cols)
        t = ir.MemRefType.get([rows * pitch], mlir_type(dtype))
        with ir.InsertionPoint.at_block_begin(self.entry):
            buf = memref.alloca(t, [], [], alignment=ALIGN)
        if valid is None:
            valid = (self.idx(rows), self.idx(cols))
        return TileBuf(buf, dtype, rows, cols, pitch, width, valid)

    def alloc_scratch(self, elem: ir.Type, count: int) -> ir.Value:
        t = ir.MemRefType.get([count], elem)
        with ir.InsertionPoint.at_block_begin(self.entry):
            return memref.alloca(t, [], [], alignment=ALIGN)

    def alloc_heap(self, elem: ir.Type, count: int) -> ir.Value:
        """A buffer too large for the stack, taken at function entry from the runtime's
        per-thread scratch (the launch context's `scratch_acquire`, `abi.py`) and given back
        at its end (its address is 0 where none could be had)."""
        nbytes = count * (elem.width // 8)
        with ir.InsertionPoint.at_block_begin(self.entry):
            ptr = self._context_call("scratch_acquire", ptr_type(), [arith.constant(_i64(), nbytes)])
            buf = _memref_at(ptr, ir.MemRefType.get([count], elem))
        self.heap.append(ptr)
        return buf

    def _context_call(self, field: str, result: ir.Type | None, operands: list[ir.Value]) -> ir.Value | None:
        """Call the launch context's function pointer `field` (the kernel's last argument
        points at the context) when it is set; a result reads as null / 0 when it is not."""
        fn = llvm.load(ptr_type(), field_address(self.args[-1], CONTEXT_FIELDS.index(field)))
        is_set = llvm.icmp(llvm.ICmpPredicate.ne, fn, llvm.mlir_zero(ptr_type()))
        branch = scf.IfOp(is_set, [] if result is None else [result], has_else=result is not None)
        with ir.InsertionPoint(branch.then_block):
            value = llvm.call(result, [fn, *operands], [], [])
            scf.yield_([] if result is None else [value])
        if result is not None:
            with ir.InsertionPoint(branch.else_block):
                scf.yield_([llvm.mlir_zero(result)])
            return branch.result
        return None

    def alloc_zeroed(self, elem: ir.Type, count: int) -> ir.Value:
        """A small integer buffer allocated and zeroed at function entry."""
        with ir.InsertionPoint.at_block_begin(self.entry):
            buf = memref.alloca(ir.MemRefType.get([count], elem), [], [], alignment=ALIGN)
            with self.loop(0, count) as lp:
                memref.store(arith.constant(elem, 0), buf, [lp.induction_variable])
        return buf

    def with_valid(self, tile: TileBuf, valid: tuple[ir.Value, ir.Value]) -> TileBuf:
        return TileBuf(tile.buf, tile.dtype, tile.rows, tile.cols, tile.pitch, tile.width, valid)

    # -- loops --------------------------------------------------------------------------
    @contextmanager
    def loop(self, lo, hi, step=1, iter_args: Sequence[ir.Value] = ()) -> Iterator[scf.ForOp]:
        """`with kb.loop(lo, hi, step) as f:` — the body is built at `f`'s block; a body
        with iter args must end with `scf.yield_`; one without gets it appended."""
        lo, hi, step = (self.idx(v) if isinstance(v, int) else v for v in (lo, hi, step))
        op = scf.ForOp(lo, hi, step, list(iter_args))
        with ir.InsertionPoint(op.body):
            yield op
            if not iter_args:
                scf.yield_([])

    def streaming_store(self, nbytes: int | None) -> bool:
        """Whether stores into a DDR tensor of `nbytes` should be non-temporal: when it is at
        least 3/4 of the last-level cache (glibc's threshold for memcpy), or at least 1/4 of
        it in a kernel whose tensors together reach 3/4, it cannot stay cached for its readers
        anyway, and bypassing the cache saves reading every written line first (add 4096^2
        fp32: 23 -> 32 GB/s; softmax 4096x1024 fp32 out of DRAM: 10 -> 15 GB/s). `finish`
        then ends the kernel with `isa.store_fence`, so the weakly ordered stores are visible
        before the kernel returns."""
        llc = isa.current().llc_bytes
        crowded = self.footprint is not None and 4 * self.footprint >= 3 * (llc or 0)
        use = nbytes is not None and llc is not None and 4 * nbytes >= (1 if crowded else 3) * llc
        self.nontemporal = self.nontemporal or use
        return use

    def finish(self) -> ir.Module:
        with ir.InsertionPoint(self.entry):
            if self.nontemporal:
                isa.store_fence()
            for ptr in self.heap:
                self._context_call("scratch_release", None, [ptr])
            func.ReturnOp([])
        return self.module


def field_address(base: ir.Value, index: int) -> ir.Value:
    """Address of the `index`-th 8-byte field of the struct at `base`."""
    if not index:
        return base
    offset = ir.DenseI32ArrayAttr.get([index])
    return llvm.getelementptr(ptr_type(), base, [], offset, _i64(), no_wrap_flags=0)


def ptr_type() -> ir.Type:
    """`!llvm.ptr`: an opaque pointer (launch-context fields, runtime functions)."""
    return ir.Type.parse("!llvm.ptr")


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _memref_at(ptr: ir.Value, t: ir.MemRefType) -> ir.Value:
    """The 1-D memref of static type `t` whose data starts at `ptr`: its descriptor built
    by hand (`abi.py`'s layout), cast to the memref type."""
    count = t.shape[0]
    desc = llvm.mlir_undef(ir.Type.parse("!llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>"))
    for position, value in (([0], ptr), ([1], ptr), ([2], arith.constant(_i64(), 0)),
                            ([3, 0], arith.constant(_i64(), count)), ([4, 0], arith.constant(_i64(), 1))):
        desc = llvm.insertvalue(desc, value, position)
    return builtin.unrealized_conversion_cast([t], [desc])


def static_index(v: ir.Value) -> int | None:
    """The value of an index built by `arith.constant` (None for anything computed)."""
    op = v.owner
    if isinstance(op, ir.OpView) and isinstance(op.opview, arith.ConstantOp):
        return ir.IntegerAttr(op.opview.value).value
    return None


def _wrap_int(v: int, bits: int) -> int:
    """Two's-complement reinterpretation of `v` in `bits` (MLIR wants signed literals)."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v
