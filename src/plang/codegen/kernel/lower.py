"""Lower one core function (InCore / AIC / AIV) of lowered IR to an MLIR module.

Parameters follow the kernel ABI (`abi.py`): DDR tensors become strided memrefs with a unit
innermost stride, scalars become scalar arguments, and a trailing `!llvm.ptr` points to the
launch context. Statements map to structured control flow: `For` → `scf.for` (scalar iter
args are carried by the loop; tile iter args live in a buffer the body updates in place),
`If` → `scf.if`, `While` → `scf.while`. Every tile op dispatches through `LOWERINGS`
(op name → lowering function); an op without one is a compile-time error naming the op and
the function.

Fusion is decided before codegen (`passes/fuse_tile_ops.py`) and read here: a call operand
is a fused producer computed chunk by chunk where it is read (`LowerContext.operand`);
`with pl.fused(rows=R)` is a row region (`lower_rows.py`); `with pl.fused()` computes a
producer and a row reduction of it in one pass.
"""

from __future__ import annotations

from typing import Any, Callable

from ... import ir as pir
from ...dtypes import BOOL, INDEX
from ...passes.analysis.row_regions import through_fused
from ...passes.analysis.var_uses import expr_vars, used_vars
from . import (
    lower_array,
    lower_batch_matmul,
    lower_cast,
    lower_elementwise,
    lower_extra_elementwise,
    lower_gather_compare,
    lower_generate,
    lower_indexing,
    lower_layout,
    lower_matmul,
    lower_memory,
    lower_pipe,
    lower_reduce,
    lower_rng,
    lower_sort,
    lower_system,
    lower_views,
)
from .abi import TensorArg, kernel_signature
from .builder import KernelBuilder, TileBuf, mlir_type
from .checks import running
from .context import DdrTensor, LowerContext, Request
from .lower_array import copy_array, new_array
from .lower_memory import tensor_bytes
from .lower_rows import lower_row_region
from .lower_scalar import convert, lower_scalar, scalar_type
from .mlir import KernelCompileError, arith, ir, scf
from .pack_cache import load_only_tensors
from .vectors import LazyTile, copy_tile

Lowering = Callable[[LowerContext, str, dict], Any]
LOWERINGS: dict[str, Lowering] = {}
for _module in (lower_elementwise, lower_cast, lower_memory, lower_reduce, lower_matmul, lower_layout,
                lower_pipe, lower_extra_elementwise, lower_generate, lower_indexing, lower_gather_compare,
                lower_batch_matmul, lower_system, lower_views, lower_sort, lower_rng, lower_array):
    _module.register(LOWERINGS)

_CONTEXT_OPS = {"tile.get_block_idx": 0, "tile.get_block_num": 1, "tile.get_subblock_idx": 2}


def tensor_memref_type(t: pir.TensorType) -> ir.MemRefType:
    dyn = ir.ShapedType.get_dynamic_size()
    dyn_so = ir.ShapedType.get_dynamic_stride_or_offset()
    strides = [dyn_so] * (t.rank - 1) + [1]
    return ir.MemRefType.get([dyn] * t.rank, mlir_type(t.dtype),
                             layout=ir.StridedLayoutAttr.get(dyn_so, strides))


def _abi_scalar_type(dtype) -> ir.Type:
    if dtype is BOOL:
        return ir.IntegerType.get_signless(8)
    if dtype.is_float:
        return mlir_type(dtype)
    return ir.IntegerType.get_signless(64)


def build_module(function: pir.Function, check_sites: list | None = None,
                 syncall_sites: list | None = None) -> ir.Module:
    """The kernel's MLIR module (call under an MLIR context and location); its bounds checks'
    sites (`checks.CheckSite`) are appended to `check_sites`, its barriers (`abi.SyncSite`)
    to `syncall_sites`."""
    if not function.func_type.is_core:
        raise KernelCompileError(f"function {function.name!r} is {function.func_type.value}, "
                                 "not a core kernel (InCore / AIC / AIV)")
    sig = kernel_signature(function)
    arg_types = [tensor_memref_type(p.type) if isinstance(a, TensorArg) else _abi_scalar_type(a.dtype)
                 for p, a in zip(function.params, sig.args)]
    arg_types.append(ir.Type.parse("!llvm.ptr"))
    sizes = [tensor_bytes(p.type) for p in function.params if isinstance(p.type, pir.TensorType)]
    kb = KernelBuilder(function.name, arg_types, None if None in sizes else sum(sizes))
    lc = LowerContext(kb, function, kb.args[-1], _Driver())
    with ir.InsertionPoint(kb.entry):
        dynamic_dims: dict[pir.Var, tuple[DdrTensor, int]] = {}
        load_only = load_only_tensors(function)
        for p, a, v in zip(function.params, sig.args, kb.args):
            if isinstance(a, TensorArg):
                tensor = DdrTensor(v, p.type, p in load_only)
                lc.bind(p, tensor)
                for axis, d in enumerate(p.type.shape):
                    if isinstance(d, pir.Var):
                        dynamic_dims.setdefault(d, (tensor, axis))
            else:
                lc.bind(p, (_narrow_abi_scalar(v, a.dtype), a.dtype))
        for var, (tensor, axis) in dynamic_dims.items():  # a dynamic dim is read from its memref
            if var not in function.params:
                lc.bind(var, (tensor.dim(axis), INDEX))
        lower_stmt(lc, function.body)
    if check_sites is not None:
        check_sites.extend(lc.check_sites)
    if syncall_sites is not None:
        syncall_sites.extend(lc.syncall_sites)
    return kb.finish()


def _narrow_abi_scalar(v: ir.Value, dtype) -> ir.Value:
    if dtype is BOOL:
        return arith.trunci(ir.IntegerType.get_signless(1), v)
    if dtype is INDEX:
        return arith.index_cast(ir.IndexType.get(), v)
    if dtype.is_int and dtype.bits < 64:
        return arith.trunci(mlir_type(dtype), v)
    return v


# -- calls ------------------------------------------------------------------------------------

def bound_args(call: pir.Call) -> dict[str, Any]:
    """The call's arguments by parameter name (defaults filled in)."""
    out: dict[str, Any] = {}
    args = iter(call.args)
    for p in call.op.params:
        if p.is_expr and p.required:
            out[p.name] = next(args)
        else:
            out[p.name] = call.kwargs.get(p.name, None if p.required else p.default)
    return out


class _Driver:
    """The statement walker as `LowerContext.driver`."""

    def lower_call(self, lc: LowerContext, request: Request) -> Any:
        return lower_call(lc, request)

    def lower_block(self, lc: LowerContext, stmts: list, hints: dict) -> list | None:
        return lower_stmts(lc, stmts, hints)


def lower_call(lc: LowerContext, request: Request) -> Any:
    call = request.call
    if isinstance(call.op, pir.GlobalVar):
        raise lc.error(f"call of function {call.op.name!r} inside a kernel is not supported; "
                       "inline it first")
    name = call.op.name
    with lc.lowering(request):
        if name in _CONTEXT_OPS:
            return lc.context_field(_CONTEXT_OPS[name]), INDEX
        fn = LOWERINGS.get(name)
        if fn is None:
            raise lc.error(f"op {name} is not supported by the kernel backend")
        return fn(lc, name.split(".", 1)[1], bound_args(call))


def _value_of(lc: LowerContext, e: pir.Expr, dest: TileBuf | None = None, lazy: bool = False) -> Any:
    if isinstance(e, pir.Call):
        return lower_call(lc, Request(e, dest, lazy=lazy and isinstance(e.type, pir.TileType)))
    if isinstance(e, pir.Var) and not isinstance(e.type, pir.ScalarType):
        return lc._bound(e)
    return lower_scalar(lc, e)


# -- statements -------------------------------------------------------------------------------

def lower_stmt(lc: LowerContext, s: pir.Stmt | None, hints: dict | None = None) -> list | None:
    """Lower a statement list; returns the values of a trailing `Yield` (None without one)."""
    return lower_stmts(lc, pir.flatten(s), hints or {})


def lower_stmts(lc: LowerContext, stmts: list, hints: dict) -> list | None:
    """Lower `stmts` (`hints`: Assign -> buffer to compute its tile into); a `KernelCompileError`
    without a location gets the span of the statement it came from."""
    yielded = None
    for st in stmts:
        try:
            yielded = _lower_one(lc, st, hints, yielded)
        except KernelCompileError as e:
            if not e.span.is_known and st.span is not None and st.span.is_known:
                e.span = st.span
            raise
    return yielded


def _lower_one(lc: LowerContext, st: pir.Stmt, hints: dict, yielded: list | None) -> list | None:
    """Lower one statement; returns the values of a trailing `Yield` so far."""
    if isinstance(st, pir.Assign):
        if st in lc.prebound:
            lc.bind(st.var, lc.prebound.pop(st))
            return yielded
        lc.bind(st.var, _value_of(lc, st.value, hints.get(st)))
    elif isinstance(st, pir.Eval):
        _value_of(lc, st.expr)
    elif isinstance(st, pir.For):
        _lower_for(lc, st)
    elif isinstance(st, pir.If):
        _lower_if(lc, st)
    elif isinstance(st, pir.While):
        _lower_while(lc, st)
    elif isinstance(st, pir.Yield):
        yielded = [_value_of(lc, v, lazy=True) for v in st.values]
    elif isinstance(st, pir.Return):  # a kernel returns through its Out tensors; a call here still runs
        for v in st.values:
            if isinstance(v, pir.Call):
                _value_of(lc, v)
    elif isinstance(st, pir.Scope) and st.kind is pir.ScopeKind.Fused:
        body = pir.flatten(st.body)
        if "rows" in st.attrs:
            lower_row_region(lc, body, st.attrs["rows"], hints)
        else:
            _lower_single_pass(lc, body, hints)
    else:
        raise lc.error(f"statement {type(st).__name__} is not supported in kernels")
    return yielded


def _lower_single_pass(lc: LowerContext, body: list, hints: dict) -> None:
    """`with pl.fused():` a producer, then (after non-writing assignments) a row reduction
    of its tile (or of one op of it: `c`, then `row_sum(mul(c, c))`), computed in one pass
    over the elements; a producer nothing else reads is reduced and never stored."""
    first, last = body[0], body[-1]
    red = last.value if isinstance(last, pir.Assign) else None
    reduced = red.args[0] if isinstance(red, pir.Call) and red.args else None
    middle = next((st for st in body[1:-1] if isinstance(st, pir.Assign) and st.var is reduced
                   and isinstance(st.value, pir.Call)), None)
    if (len(body) < 2 or not isinstance(first, pir.Assign) or not isinstance(red, pir.Call)
            or isinstance(red.op, pir.GlobalVar) or red.op.facts.reduction is None
            or (reduced is not first.var and middle is None)):
        raise lc.error("`with pl.fused():` must hold a tile producer first and a row reduction "
                       "of its result (or of one op of it) last")
    through = None if middle is None else (first.var, middle.value)
    request = Request(first.value, hints.get(first), reduce=(last, red.op.facts.reduction, hints.get(last)),
                      keep=through is not None or lc.use_counts[first.var] > 1, through=through)
    lc.bind(first.var, lower_call(lc, request))
    lower_stmts(lc, [st for st in body[1:] if st is not middle], hints)


def _carried(lc: LowerContext, iter_args, inits) -> tuple[list, list]:
    """Split loop-carried values into scf operands (scalars) and buffers (tiles)."""
    scalars, buffers = [], []
    for ia, init in zip(iter_args, inits):
        if isinstance(ia.type, pir.TileType):
            src = init if isinstance(init, TileBuf) else None
            buf = lc.new_tile(ia.type)
            if src is not None:
                copy_tile(lc.kb, src, buf)
            buffers.append((ia, buf))
        elif isinstance(ia.type, pir.TensorType):
            buffers.append((ia, init))
        else:
            v, d = init
            scalars.append((ia, convert(v, d, ia.type.dtype)))
    return scalars, buffers


def _yield_hints(body: pir.Stmt, buffers: list) -> dict:
    """Assignments whose result may be computed straight into a tile iter arg's buffer
    (those inside a fused region included)."""
    stmts = through_fused(pir.flatten(body))
    if not stmts or not isinstance(stmts[-1], pir.Yield):
        return {}
    tiles = {ia: buf for ia, buf in buffers if isinstance(buf, TileBuf)}
    by_var = {st.var: i for i, st in enumerate(stmts) if isinstance(st, pir.Assign)}
    hints = {}
    iter_args = [ia for ia, _ in buffers]
    for ia, y in zip(iter_args, stmts[-1].values):
        if ia not in tiles or not isinstance(y, pir.Var) or y not in by_var:
            continue
        i = by_var[y]
        st = stmts[i]
        if not isinstance(st.value, pir.Call) or any(ia in used_vars(s) for s in stmts[i + 1:-1]):
            continue
        if ia in expr_vars(st.value) and not _in_place_ok(st.value, ia):
            continue
        hints[st] = tiles[ia]
    return hints


def _in_place_ok(call: pir.Call, ia: pir.Var) -> bool:
    if isinstance(call.op, pir.GlobalVar):
        return False
    facts = call.op.facts
    if facts.in_place_safe:
        return True
    if facts.accumulator is not None:
        acc = bound_args(call)[facts.accumulator]
        return acc is ia and all(ia not in expr_vars(a) for a in call.args if a is not acc)
    return False


def _lower_for(lc: LowerContext, st: pir.For) -> None:
    inits = [_value_of(lc, ia.init) for ia in st.iter_args]
    scalars, buffers = _carried(lc, st.iter_args, inits)
    for ia, buf in buffers:
        lc.bind(ia, buf)
    hints = _yield_hints(st.body, buffers)
    lo, hi, step = lc.index(st.start), lc.index(st.stop), lc.index(st.step)
    # an scf.while whose condition is also a cancellation point (the loop's back-edge)
    inits = [lo] + [v for _, v in scalars]
    types = [v.type for v in inits]
    loop = scf.WhileOp(types, inits)
    before = loop.before.blocks.append(*types)
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(before):
        go = arith.cmpi(arith.CmpIPredicate.slt, before.arguments[0], hi)
        scf.condition(arith.andi(go, running(lc)), list(before.arguments))
    lc.kb.counted[after.arguments[0]] = (loop, (lo, hi, step))
    with ir.InsertionPoint(after):
        lc.bind(st.loop_var, (after.arguments[0], INDEX))
        for (ia, _), arg in zip(scalars, list(after.arguments)[1:]):
            lc.bind(ia, (arg, ia.type.dtype))
        following = arith.addi(after.arguments[0], step)
        lc.next_iteration.append((st.loop_var, following))
        yielded = lower_stmt(lc, st.body, hints) or []
        lc.next_iteration.pop()
        scf.yield_([following]
                   + _finish_yield(lc, st.iter_args, yielded, dict(buffers)))
    _bind_results(lc, st.iter_args, st.return_vars, list(loop.results)[1:], dict(buffers))


def _finish_yield(lc: LowerContext, carried, yielded: list, buffers: dict) -> list:
    """Copy yielded tiles into their buffers; return the scalar yield operands."""
    if len(yielded) != len(carried):
        raise lc.error(f"loop yields {len(yielded)} values for {len(carried)} carried variables")
    out = []
    for ia, y in zip(carried, yielded):
        if ia in buffers:
            if isinstance(y, (TileBuf, LazyTile)):
                copy_tile(lc.kb, y, buffers[ia])
        else:
            v, d = y
            out.append(convert(v, d, ia.type.dtype))
    return out


def _bind_results(lc: LowerContext, carried, return_vars, results: list, buffers: dict) -> None:
    results = iter(results)
    for ia, rv in zip(carried, return_vars):
        lc.bind(rv, buffers[ia] if ia in buffers else (next(results), rv.type.dtype))


def _lower_if(lc: LowerContext, st: pir.If) -> None:
    cond, d = lower_scalar(lc, st.cond)
    cond = convert(cond, d, BOOL)
    buffers = {rv: lc.new_tile(rv.type) for rv in st.return_vars if isinstance(rv.type, pir.TileType)}
    arrays = {rv: new_array(lc, rv.type) for rv in st.return_vars if isinstance(rv.type, pir.ArrayType)}
    scalar_rvs = [rv for rv in st.return_vars if rv not in buffers and rv not in arrays]
    result_types = [scalar_type(rv.type.dtype) for rv in scalar_rvs
                    if isinstance(rv.type, pir.ScalarType)]
    has_else = st.else_body is not None or bool(st.return_vars)
    op = scf.IfOp(cond, result_types, has_else=has_else)
    tensors: dict = {}
    branches = [(op.then_block, st.then_body)] + ([(op.else_block, st.else_body)] if has_else else [])
    for block, body in branches:
        with ir.InsertionPoint(block):
            yielded = lower_stmt(lc, body) or []
            out = []
            for rv, y in zip(st.return_vars, yielded):
                if rv in buffers:
                    copy_tile(lc.kb, y, buffers[rv])
                elif rv in arrays:
                    copy_array(lc, rv.type, y, arrays[rv])
                elif isinstance(rv.type, pir.TensorType):
                    tensors[rv] = y
                else:
                    v, dd = y
                    out.append(convert(v, dd, rv.type.dtype))
            scf.yield_(out)
    results = iter(op.results)
    for rv in st.return_vars:
        if rv in buffers or rv in arrays:
            lc.bind(rv, buffers.get(rv) or arrays[rv])
        elif rv in tensors:
            lc.bind(rv, tensors[rv])
        else:
            lc.bind(rv, (next(results), rv.type.dtype))


def _lower_while(lc: LowerContext, st: pir.While) -> None:
    inits = [_value_of(lc, ia.init) for ia in st.iter_args]
    scalars, buffers = _carried(lc, st.iter_args, inits)
    for ia, buf in buffers:
        lc.bind(ia, buf)
    types = [v.type for _, v in scalars]
    op = scf.WhileOp(types, [v for _, v in scalars])
    before = op.before.blocks.append(*types)
    after = op.after.blocks.append(*types)
    with ir.InsertionPoint(before):
        for (ia, _), arg in zip(scalars, before.arguments):
            lc.bind(ia, (arg, ia.type.dtype))
        c, d = lower_scalar(lc, st.cond)
        scf.condition(arith.andi(convert(c, d, BOOL), running(lc)), list(before.arguments))
    with ir.InsertionPoint(after):
        for (ia, _), arg in zip(scalars, after.arguments):
            lc.bind(ia, (arg, ia.type.dtype))
        lc.next_iteration.append(None)  # no next iteration to compute offsets for
        yielded = lower_stmt(lc, st.body) or []
        lc.next_iteration.pop()
        scf.yield_(_finish_yield(lc, st.iter_args, yielded, dict(buffers)))
    _bind_results(lc, st.iter_args, st.return_vars, list(op.results), dict(buffers))
