"""`LowerContext`: the state shared by the op lowerings of one kernel — the builder, the
binding of IR variables to MLIR values / tile buffers / DDR memrefs, the `Request` of the
call being lowered, and error reporting.

The statement walker (`lower.py`) is injected as the context's `Driver`, so op lowerings
reach it (to lower a fused producer operand or a region body) without importing it.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Protocol

from ... import ir as pir
from ...dtypes import INDEX, DataType
from ...passes.analysis.row_regions import use_counts
from ...passes.analysis.var_uses import walk_stmts
from .abi import SUPPORTED_DTYPES
from .builder import KernelBuilder, TileBuf, field_address, ptr_type
from .lower_scalar import convert, lower_scalar, to_compute_scalar
from .mlir import KernelCompileError, arith, ir, llvm, memref
from .reductions import reduce_rows
from .vectors import LazyTile, Operand, lazy_map, materialize


def unsupported(where: str, dtype: DataType) -> KernelCompileError:
    return KernelCompileError(f"{where}: dtype {dtype.name} is not supported by the kernel backend")


@dataclass(frozen=True)
class Request:
    """What the caller asks of one op call's lowering.

    dest: a buffer to compute the tile result into when it fits (a loop's carried buffer);
    lazy: the result may stay a `LazyTile` (the call is a fused producer, `FuseTileOps`);
    reduce: a row reduction of the result to compute in the same pass, (its Assign, op name,
    its own dest); its buffer lands in `LowerContext.prebound`;
    keep: whether the result itself is read later (False: only that reduction reads it, so
    its values are reduced but never stored);
    through: (the result's Var, an op call of it) when the reduction reduces that call's
    values instead, computed from each chunk of the result as it is written;
    read_only: the (fused) result is only read, so it may be another tile's buffer itself.
    """

    call: pir.Call
    dest: TileBuf | None = None
    lazy: bool = False
    reduce: tuple[pir.Assign, str, TileBuf | None] | None = None
    keep: bool = True
    through: tuple[pir.Var, pir.Call] | None = None
    read_only: bool = False


class Driver(Protocol):
    """The statement walker, as op lowerings see it."""

    def lower_call(self, lc: LowerContext, request: Request) -> Any: ...

    def lower_block(self, lc: LowerContext, stmts: list, hints: dict) -> list | None: ...


@dataclass
class RowMode:
    """Row-wise fusion (`lower_rows.py`): the statements being lowered compute row `row` of
    tiles with `rows` rows, so each such tile appears as a one-row tile (a one-row buffer,
    a view of one row of a full buffer, or a lazy tile reading row `row`)."""

    row: ir.Value
    rows: int


@dataclass
class DdrTensor:
    """A DDR tensor parameter: its strided memref and IR type."""

    memref: ir.Value
    type: pir.TensorType
    load_only: bool = False  # the kernel only reads it, with tile.load

    @property
    def rank(self) -> int:
        return self.type.rank

    def dim(self, i: int) -> ir.Value:
        return memref.dim(self.memref, arith.constant(ir.IndexType.get(), i))


def tile_dims(t: pir.TileType, where: str) -> tuple[int, int]:
    """A tile's static shape as (rows, cols): rank 1 is one row, leading dims fold into rows."""
    shape = t.static_shape
    if shape is None:
        raise KernelCompileError(f"{where}: tile shape {pir.types.format_shape(t.shape)} must be static")
    if len(shape) == 1:
        return 1, shape[0]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows, shape[-1]


class LowerContext:
    def __init__(self, kb: KernelBuilder, function: pir.Function, ctx_ptr: ir.Value, driver: Driver) -> None:
        self.kb = kb
        self.function = function
        self.ctx_ptr = ctx_ptr
        self.driver = driver
        self.env: dict[pir.Var, Any] = {}
        self.request: Request | None = None
        self.prebound: dict[pir.Assign, TileBuf] = {}
        self.row_mode: RowMode | None = None
        # the enclosing loops, innermost last: (a for loop's var, its next value) or None (a
        # while loop); a load prefetches the tile its loop's next iteration reads from them
        self.next_iteration: list[tuple[pir.Var, ir.Value] | None] = []
        self.check_sites: list = []  # the kernel's bounds checks (`checks.CheckSite`), by site id
        self.syncall_sites: list = []  # the kernel's barriers (`abi.SyncSite`), by site id
        self.cancel_word: ir.Value | None = None  # the launch's cancel pointer, loaded at entry
        self._use_counts: Counter | None = None
        self._computed_vars: set | None = None

    @property
    def use_counts(self) -> Counter:
        """How often each Var is read in the function body (computed once)."""
        if self._use_counts is None:
            self._use_counts = use_counts([self.function.body])
        return self._use_counts

    def dies_into(self, var: pir.Expr) -> TileBuf | None:
        """The buffer of tile `var` when the current call may take it as its own result: a
        same-typed copy (a move, a cast to its own dtype) of a tile computed by an op that
        nothing else reads, with no destination asked for. Iter args, loop results and
        lazy tiles are excluded: another statement may still write or recompute them."""
        if (self.defer or self.request.dest is not None or not isinstance(var, pir.Var)
                or self.use_counts[var] != 1 or var not in self._computed()):
            return None
        tile = self.env.get(var)
        return tile if isinstance(tile, TileBuf) else None

    def _computed(self) -> set:
        """The tile variables an op call assigns (computed once)."""
        if self._computed_vars is None:
            self._computed_vars = {st.var for st in walk_stmts(self.function.body)
                                   if isinstance(st, pir.Assign) and isinstance(st.value, pir.Call)
                                   and isinstance(st.var.type, pir.TileType)}
        return self._computed_vars

    @property
    def call(self) -> pir.Call | None:
        """The op call being lowered."""
        return self.request.call if self.request is not None else None

    @property
    def defer(self) -> bool:
        """The current call's result may stay lazy."""
        return self.request is not None and self.request.lazy

    @contextmanager
    def lowering(self, request: Request) -> Iterator[None]:
        """Lower `request.call` (requests nest: a fused producer inside its consumer)."""
        saved, self.request = self.request, request
        try:
            yield
        finally:
            self.request = saved

    @contextmanager
    def in_row_mode(self, mode: RowMode) -> Iterator[None]:
        self.row_mode = mode
        try:
            yield
        finally:
            self.row_mode = None

    # -- errors ---------------------------------------------------------------------------
    def where(self, op: str) -> str:
        return f"{op} in function {self.function.name!r}"

    def error(self, message: str) -> KernelCompileError:
        node = self.call
        loc = ""
        if node is not None and node.span is not None and getattr(node.span, "filename", None):
            loc = f" ({node.span.filename}:{node.span.begin_line})"
        return KernelCompileError(f"function {self.function.name!r}: {message}{loc}")

    # -- bindings -------------------------------------------------------------------------
    def bind(self, var: pir.Var, value: Any) -> None:
        self.env[var] = value

    def _bound(self, e: pir.Expr) -> Any:
        if not isinstance(e, pir.Var):
            raise self.error(f"expected a variable, got {type(e).__name__}")
        try:
            return self.env[e]
        except KeyError:
            raise self.error(f"variable {e.name!r} is used before it is defined") from None

    def operand(self, e: pir.Expr, read_only: bool = True) -> TileBuf | LazyTile:
        """A tile operand read chunk by chunk (may stay lazy; `read_only`: and never written,
        so it may be another tile's buffer); a call operand is a fused producer, computed
        where it is read."""
        if isinstance(e, pir.Call):
            v = self.driver.lower_call(self, Request(e, lazy=True, read_only=read_only))
            if not isinstance(v, (TileBuf, LazyTile)):
                raise self.error(f"{e.op.name} does not produce a tile")
            return v
        v = self._bound(e)
        if not isinstance(v, (TileBuf, LazyTile)):
            raise self.error(f"{e.name!r} is not a tile")
        return v

    def tile(self, e: pir.Expr) -> TileBuf:
        """A tile operand in a buffer (a lazy tile is computed into one here) that the caller
        may write: a fused producer's result is never another tile's buffer."""
        v = self.operand(e, read_only=False)
        if isinstance(v, LazyTile):
            v = self.in_buffer(v)
            if isinstance(e, pir.Var):
                self.env[e] = v
        return v

    def in_buffer(self, lazy: LazyTile) -> TileBuf:
        """`lazy` computed into a new tile buffer."""
        buf = self.kb.alloc_tile(lazy.dtype, lazy.rows, lazy.cols, lazy.valid)
        materialize(self.kb, buf, lazy)
        return buf

    def ddr(self, e: pir.Expr) -> DdrTensor:
        v = self._bound(e)
        if not isinstance(v, DdrTensor):
            raise self.error(f"{e.name!r} is not a DDR tensor parameter")
        return v

    def lookup_scalar(self, var: pir.Var) -> tuple[ir.Value, DataType]:
        v = self._bound(var)
        if not isinstance(v, tuple):
            raise self.error(f"{var.name!r} is not a scalar")
        return v

    # -- scalars --------------------------------------------------------------------------
    def scalar(self, e: pir.Expr, tile_dtype: DataType, storage: bool = False) -> ir.Value:
        """A scalar operand for a tile op on `tile_dtype` (its compute or storage type)."""
        v, d = lower_scalar(self, e)
        return convert(v, d, tile_dtype) if storage else to_compute_scalar(v, d, tile_dtype)

    def index(self, e: pir.Expr) -> ir.Value:
        v, d = lower_scalar(self, e)
        return convert(v, d, INDEX)

    def scalar_call(self, call: pir.Call) -> tuple[ir.Value, DataType]:
        value = self.driver.lower_call(self, Request(call))
        if not isinstance(value, tuple):
            raise self.error(f"{call.op.name} does not produce a scalar")
        return value

    # -- tiles ----------------------------------------------------------------------------
    def dims(self, t: pir.TileType, where: str) -> tuple[int, int]:
        """`tile_dims` of a tile as this code sees it: one row in row mode."""
        rows, cols = tile_dims(t, where)
        mode = self.row_mode
        return (1, cols) if mode is not None and rows == mode.rows else (rows, cols)

    def valid_of(self, t: pir.TileType) -> tuple[ir.Value, ir.Value]:
        """The valid (rows, cols) of a tile of type `t`; in row mode the valid rows of the
        current row (1 or 0)."""
        rows, cols = self.full_valid_of(t)
        mode = self.row_mode
        if mode is None or tile_dims(t, "")[0] != mode.rows:
            return rows, cols
        if t.valid_shape is None:
            return self.kb.idx(1), cols
        inside = arith.cmpi(arith.CmpIPredicate.ult, mode.row, rows)
        return arith.select(inside, self.kb.idx(1), self.kb.idx(0)), cols

    def full_valid_of(self, t: pir.TileType) -> tuple[ir.Value, ir.Value]:
        """The valid (rows, cols) of the whole tile, row mode or not."""
        rows, cols = tile_dims(t, self.where("tile"))
        if t.valid_shape is None:
            return self.kb.idx(rows), self.kb.idx(cols)
        # the valid rows are a prefix only if every leading dim of extent > 1 after the first
        # such dim is fully valid
        wide = [axis for axis, s in enumerate(t.static_shape[:-1]) if s > 1]
        for axis in wide[1:]:
            if pir.types.dim_value(t.valid_shape[axis]) != t.static_shape[axis]:
                raise self.error(f"tile valid_shape {pir.types.format_shape(t.valid_shape)} of shape "
                                 f"{pir.types.format_shape(t.shape)}: only the first leading dim "
                                 "of extent > 1 and the last dim may be partially valid")
        vs = [self.valid_extent(d, s) for d, s in zip(t.valid_shape, t.static_shape)]
        if len(vs) == 1:
            return self.kb.idx(1), vs[0]
        vr = vs[0]
        for d in vs[1:-1]:
            vr = arith.muli(vr, d)
        return vr, vs[-1]

    def valid_extent(self, e: pir.Expr, static: int) -> ir.Value:
        """A valid extent clipped to [0, static]: a runtime valid_shape larger than its tile
        never reaches past the tile's buffer."""
        v = self.index(e)
        if pir.types.dim_value(e) is not None:
            return v
        return arith.maxsi(arith.minsi(v, self.kb.idx(static)), self.kb.idx(0))

    def new_tile(self, t: pir.TileType) -> TileBuf:
        if t.dtype not in SUPPORTED_DTYPES:
            raise unsupported(self.where(self.call.op.name if self.call else "tile"), t.dtype)
        rows, cols = self.dims(t, self.where("tile"))
        return self.kb.alloc_tile(t.dtype, rows, cols, self.valid_of(t))

    def result_tile(self) -> TileBuf:
        """The buffer the current call writes its tile result into."""
        t = self.call.type
        if not isinstance(t, pir.TileType):
            raise self.error(f"{self.call.op.name} result is not a tile")
        d = self.request.dest
        if d is not None and d.dtype is t.dtype and (d.rows, d.cols) == self.dims(t, ""):
            return self.kb.with_valid(d, self.valid_of(t))
        return self.new_tile(t)

    def elementwise(self, operands: list[Operand], fn, convert: bool = True) -> TileBuf | LazyTile:
        """The current call's result, `fn` over `operands` chunk by chunk: lazy when the
        call may be deferred, else computed into the result buffer."""
        t = self.call.type
        if t.dtype not in SUPPORTED_DTYPES:
            raise unsupported(self.where(self.call.op.name), t.dtype)
        if self.defer:
            rows, cols = self.dims(t, self.where(self.call.op.name))
            return lazy_map(self.kb, rows, cols, t.dtype, self.valid_of(t), operands, fn, convert)
        out = self.result_tile()
        self.store_result(out, lazy_map(self.kb, out.rows, out.cols, out.dtype, out.valid, operands, fn,
                                        convert))
        return out

    def store_result(self, out: TileBuf, lazy: LazyTile) -> None:
        """Compute `lazy` into `out`, with the requested single-pass row reduction of it."""
        if self.request.reduce is None:
            materialize(self.kb, out, lazy)
            return
        stmt, op, dest = self.request.reduce
        with self.lowering(Request(stmt.value, dest)):
            red = self.result_tile()
        values = None
        if self.request.through is not None:
            var, call = self.request.through
            self.bind(var, out)
            values = self.operand(call)  # reads `out` chunk by chunk
        reduce_rows(self.kb, out, op, red, lazy, keep=self.request.keep, values=values)
        self.prebound[stmt] = red

    # -- launch context -------------------------------------------------------------------
    def context_field(self, index: int) -> ir.Value:
        """Field `index` (an int64) of the LaunchContext, as an index value."""
        i64 = ir.IntegerType.get_signless(64)
        return arith.index_cast(ir.IndexType.get(), llvm.load(i64, field_address(self.ctx_ptr, index)))

    def context_pointer(self, index: int) -> ir.Value:
        """Field `index` (a pointer) of the LaunchContext."""
        return llvm.load(ptr_type(), field_address(self.ctx_ptr, index))
