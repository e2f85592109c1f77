"""`LowerContext`: the state shared by the op lowerings of one kernel — the builder, the
binding of IR variables to MLIR values / tile buffers / DDR memrefs, and error reporting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import ir as pir
from ...dtypes import INDEX, DataType
from .abi import SUPPORTED_DTYPES
from .builder import KernelBuilder, TileBuf
from .lower_scalar import convert, lower_scalar, to_compute_scalar
from .mlir import KernelCompileError, arith, ir, llvm, memref
from .vectors import LazyTile, Operand, lazy_map, materialize


def unsupported(where: str, dtype: DataType) -> KernelCompileError:
    return KernelCompileError(f"{where}: dtype {dtype.name} is not supported by the kernel backend")


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
    def __init__(self, kb: KernelBuilder, function: pir.Function, ctx_ptr: ir.Value) -> None:
        self.kb = kb
        self.function = function
        self.ctx_ptr = ctx_ptr
        self.env: dict[pir.Var, Any] = {}
        self.call: pir.Call | None = None
        self.dest: TileBuf | None = None
        self.defer = False  # the current call's result may stay lazy (single use, fusible)
        # A row reduction of the current call's result to compute in the same pass:
        # (reduction Assign, op name); its result lands in `prebound`.
        self.fused_reduction: tuple[pir.Assign, str] | None = None
        self.prebound: dict[pir.Assign, TileBuf] = {}
        self.row_mode: RowMode | None = None
        self._use_counts: dict | None = None

    @property
    def use_counts(self) -> dict:
        """How often each Var is used in the function body (computed once)."""
        if self._use_counts is None:
            from .lower import count_uses

            self._use_counts = count_uses(self.function.body)
        return self._use_counts

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

    def operand(self, e: pir.Expr) -> TileBuf | LazyTile:
        """A tile operand read chunk by chunk (may stay lazy)."""
        v = self._bound(e)
        if not isinstance(v, (TileBuf, LazyTile)):
            raise self.error(f"{e.name!r} is not a tile")
        return v

    def tile(self, e: pir.Expr) -> TileBuf:
        """A tile operand in a buffer (a lazy tile is computed into one here)."""
        v = self.operand(e)
        if isinstance(v, LazyTile):
            buf = self.kb.alloc_tile(v.dtype, v.rows, v.cols, v.valid)
            materialize(self.kb, buf, v)
            self.env[e] = v = buf
        return v

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
        from .lower import lower_call

        value = lower_call(self, call)
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
        vs = [self.index(d) for d in t.valid_shape]
        if len(vs) == 1:
            return self.kb.idx(1), vs[0]
        vr = vs[0]
        for d in vs[1:-1]:
            vr = arith.muli(vr, d)
        return vr, vs[-1]

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
        d = self.dest
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
        """Compute `lazy` into `out`, with a pending fused row reduction of it if any."""
        if self.fused_reduction is None:
            materialize(self.kb, out, lazy)
            return
        from .lower_reduce import materialize_reducing

        stmt, op = self.fused_reduction
        saved = self.call
        self.call = stmt.value
        try:
            red = self.result_tile()
        finally:
            self.call = saved
        materialize_reducing(self.kb, out, lazy, op, red)
        self.prebound[stmt] = red

    # -- launch context -------------------------------------------------------------------
    def context_field(self, index: int) -> ir.Value:
        """Field `index` (an int64) of the LaunchContext, as an index value."""
        i64 = ir.IntegerType.get_signless(64)
        return arith.index_cast(ir.IndexType.get(), llvm.load(i64, field_address(self.ctx_ptr, index)))

    def context_pointer(self, index: int) -> ir.Value:
        """Field `index` (a pointer) of the LaunchContext."""
        return llvm.load(ir.Type.parse("!llvm.ptr"), field_address(self.ctx_ptr, index))


def field_address(base: ir.Value, index: int) -> ir.Value:
    """Address of the `index`-th 8-byte field of the struct at `base`."""
    if not index:
        return base
    return llvm.getelementptr(ir.Type.parse("!llvm.ptr"), base, [], ir.DenseI32ArrayAttr.get([index]),
                              ir.IntegerType.get_signless(64), no_wrap_flags=0)
