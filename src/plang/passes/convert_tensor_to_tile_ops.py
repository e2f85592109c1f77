"""ConvertTensorToTileOps: inside InCore functions, tensor ops become tile ops.

- `tensor.slice(t, shape, offset)` of a DDR tensor becomes `tile.load(t, offset, shape)`;
  a tensor read whole by a compute op is loaded whole (read-only parameters once, at the
  top of the function).
- `tensor.<op>` becomes `tile.<op>` on the operands' tiles (scratch tiles an op needs,
  e.g. the `tmp_tile` of a row reduction, are created); `tensor.cmp` becomes the packed mask
  of `tile.cmp` selecting BOOL ones and zeros (`tile.sel`); `tensor.create` / `tensor.full`
  become tile allocations; intermediate tensors are tiles from here on.
- A matmul operand flagged `a_trans` / `b_trans` is transposed by `tile.transpose` (of a
  loaded operand, the cube's transposed view in Mat); the transpose of a read-only parameter
  runs once, next to its load at the top.
- `tensor.assemble(out, src, offset)` into a DDR tensor becomes `tile.store(src, offset, out)`.
- A returned intermediate becomes a store into a new `Out` parameter; a call site passes
  its own untouched `Out` tensor when it returns the result under that tensor's name (the
  kernel writes straight into it), else allocates the output (`tensor.create`).

A straight-line row-wise kernel whose tiles would exceed the on-chip buffers becomes a loop
over row blocks first (`analysis/row_blocking.py`); failing that, a matmul too large for
the cube's Left / Right / Acc buffers becomes loops over output blocks and K chunks
(`analysis/matmul_tiling.py`). Otherwise a tile larger than the buffer it lives in (Vec,
or Mat for matmul operands) is an error naming the value, its byte size and the capacity:
slice the tensor in a loop.
"""

from __future__ import annotations

import re
from typing import Any

from ..dtypes import BOOL, UINT8
from ..ir.enums import FunctionType, MemorySpace, ParamDirection
from ..ir.equality import structural_equal
from ..ir.expr import Call, ConstInt, Expr, GlobalVar, IterArg, TupleGetItem, Var
from ..ir.function import Function, Program
from ..ir.ops import make_call
from ..ir.ops.registry import REGISTRY, Op, OpTypeError, OpValueError
from ..ir.stmt import (
    Assign,
    Eval,
    For,
    If,
    Return,
    Scope,
    SeqStmts,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    flatten,
    seq,
)
from ..ir.types import ShapedType, TensorType, TileType, describe_type, dim_value
from ..target import Device
from .analysis.matmul_tiling import tile_matmuls
from .analysis.memory_effects import alias_roots, op_operands, written_params
from .analysis.row_blocking import block_rows
from .analysis.var_rewrite import VarRewriter
from .analysis.var_uses import calls_in, used_vars, walk_stmts
from .context import target_device
from .diagnostics import PassError
from .framework import Pass, register_pass
from .properties import register_property

# tensor ops kept as they are inside kernels (metadata / DDR element access and copies)
KEEP = {"tensor.dim", "tensor.expand_clone"}


def _tile_form(call: Call) -> str:
    """The tile op a tensor op becomes in a kernel: its namesake, except that a row-major
    `tensor.view` is a reshape of the tile (a layout-changing view has no tile form) and a
    `tensor.matmul` / `tensor.matmul_acc` with an operand of rank > 2 is a `tile.batch_matmul` /
    `tile.batch_matmul_acc`."""
    if call.op.name == "tensor.view" and call.type.layout is call.args[0].type.layout:
        return "tile.reshape"
    if call.op.name in ("tensor.matmul", "tensor.matmul_acc") and any(
            a.type.rank > 2 for a in call.args[:3]):
        return call.op.name.replace("tensor.", "tile.batch_")
    return "tile." + call.op.short_name


# matmul transpose flag -> the operand it transposes
TRANSPOSE_FLAGS = {"a_trans": "lhs", "b_trans": "rhs"}


def _zeros(rank: int) -> list[Expr]:
    return [ConstInt(0) for _ in range(rank)]


def _cube_operands(fn: Function) -> set[Var]:
    """Vars used as operands of matmul-family ops, and the tensors such an operand is a slice
    of (their tiles, transposed ones included, live in Mat, not Vec)."""
    out: set[Var] = set()
    for c in calls_in(fn.body):
        if isinstance(c.op, Op) and c.op.facts.unit == "cube":
            out.update(a for _, a in op_operands(c) if isinstance(a, Var))
    for s in reversed(list(walk_stmts(fn.body))):
        if isinstance(s, Assign) and s.var in out and isinstance(s.value, Call) and \
                isinstance(s.value.op, Op) and s.value.op.name == "tensor.slice":
            out.update(a for a in s.value.args[:1] if isinstance(a, Var))
    return out


class _Converter(VarRewriter):
    def __init__(self, fn: Function, device: Device) -> None:
        super().__init__()
        self.fn = fn
        self.device = device
        self.cube_operands = _cube_operands(fn)
        self.loaded: dict[Var, Var] = {}  # DDR tensor -> its whole tile
        self.transposes: dict[Var, Var] = {}  # hoisted whole tile -> its hoisted transpose
        self.hoisted: list[Stmt] = []
        self.read_only = {p for p, d in zip(fn.params, fn.param_directions) if d is ParamDirection.In}
        self.pending: list[Stmt] = []  # loads to emit before the current statement
        self.out_params: list[Var] = []

    # ----------------------------------------------------------------- helpers
    def check_capacity(self, name: str, t: TileType, source: Var | None, span) -> None:
        space = MemorySpace.Mat if source is not None and source in self.cube_operands else MemorySpace.Vec
        nbytes, cap = t.nbytes, self.device.capacity(space)
        if nbytes is not None and nbytes > cap:
            raise PassError(f"value {name!r} in {self.fn.name!r} needs a {describe_type(t)} tile of {nbytes} "
                            f"bytes, more than the {space.value} buffer's {cap} bytes; slice it "
                            f"(pl.slice) inside a pl.range loop", span)

    def as_tile(self, e: Expr, span) -> Expr:
        """The tile holding `e`'s value (loading a DDR tensor whole when needed)."""
        if not isinstance(e.type, TensorType):
            return e
        if e in self.loaded:
            return self.loaded[e]
        load = make_call("tile.load", [e, _zeros(e.type.rank), list(e.type.shape)], span=span)
        self.check_capacity(e.name, load.type, e, span)
        tile = Var(f"{e.name}_tile", load.type, span)
        self.loaded[e] = tile
        (self.hoisted if e in self.read_only else self.pending).append(Assign(tile, load, span))
        return tile

    def transposed(self, e: Expr, span) -> Var:
        """`e`'s tile with its two trailing axes swapped (`tile.transpose`; the cube reads a
        loaded operand transposed in Mat, see `analysis/cube_conversions.py`; TileCapacity checks
        the space it gets). The transpose of a read-only parameter runs once, next to its
        hoisted load."""
        tile = self.as_tile(e, span)
        if tile in self.transposes:
            return self.transposes[tile]
        call = make_call("tile.transpose", [tile], {"axis1": -2, "axis2": -1}, span)
        t = Var(f"{tile.name}_t", call.type, span)
        hoisted = e in self.read_only and self.loaded.get(e) is tile
        if hoisted:
            self.transposes[tile] = t
        (self.hoisted if hoisted else self.pending).append(Assign(t, call, span))
        return t

    # ------------------------------------------------------------- expressions
    def convert_call(self, call: Call, name: str) -> Expr:
        op = call.op
        if isinstance(op, Op) and op.name == "tile.load" and isinstance(call.args[0].type, TileType):
            return self.reloaded(call)
        if not isinstance(op, Op) or op.namespace != "tensor" or op.name in KEEP:
            return call
        operands = dict(op_operands(call))
        attrs = {k: v for k, v in call.kwargs.items() if not isinstance(v, Expr)}
        span = call.span
        if op.name == "tensor.slice":
            src = operands["input"]
            if isinstance(src.type, TensorType):
                kw = {"valid_shape": operands.get("valid_shape")} if "valid_shape" in operands else {}
                load = make_call("tile.load", [src, operands["offset"], operands["shape"]], kw, span)
                self.check_capacity(name, load.type, src if isinstance(src, Var) else None, span)
                if attrs.get("drop_dims"):
                    return self.rank_reduced(load, call.type.shape, name, span)
                return load
            return self.tile_op("tile.slice", operands, attrs, span)
        if op.name == "tensor.assemble" and isinstance(operands["target"].type, TensorType):
            src = self.as_tile(operands["source"], span)
            return make_call("tile.store", [src, operands["offset"], operands["target"]],
                             {k: v for k, v in attrs.items() if k == "atomic"}, span)
        if op.name in ("tensor.read", "tensor.write", "tensor.get_block_idx", "tensor.get_block_num",
                       "tensor.get_subblock_idx"):
            first = next(iter(operands.values()), None)
            if first is not None and isinstance(first.type, TensorType):
                return call
        if op.facts.unit == "cube":
            for flag, param in TRANSPOSE_FLAGS.items():
                if attrs.pop(flag, False):
                    operands[param] = self.transposed(operands[param], span)
        result = self.tile_op(_tile_form(call), operands, attrs, span)
        if op.name in ("tensor.cmp", "tensor.cmps"):
            result = self.flags(result, span)
        if isinstance(result.type, TileType):
            self.check_capacity(name, result.type, None, span)
        return result

    def rank_reduced(self, load: Call, shape: Any, name: str, span) -> Call:
        """A rank-reducing `tensor.slice` as a tile: its full-rank load, reshaped to the slice's
        shape (a tile keeps two axes)."""
        full = Var(f"{name}_full_rank", load.type, span)
        self.pending.append(Assign(full, load, span))
        return make_call("tile.reshape", [full, [1] * (2 - len(shape)) + list(shape)], span=span)

    def reloaded(self, load: Call) -> Expr:
        """A `tile.load` of a kernel intermediate that is a tile from here on: that tile for the
        whole extent (the parser loads a tensor operand whole where it meets a tile), else
        its `tile.slice`."""
        src, offsets, shapes = load.args[:3]
        whole = all(dim_value(o) == 0 for o in offsets.elements) and all(
            structural_equal(a, b) for a, b in zip(shapes.elements, src.type.shape))
        if whole and not load.kwargs:
            return src
        valid = {"valid_shape": load.kwargs["valid_shape"]} if "valid_shape" in load.kwargs else {}
        return make_call("tile.slice", [src, shapes, offsets], valid, load.span)

    def tile_op(self, name: str, operands: dict[str, Expr], attrs: dict[str, Any], span) -> Call:
        """Call tile op `name` with the tensor op's operands (tiles in place of tensors);
        a required operand the tensor op lacks takes the tensor op's operand in the same
        position (a renamed parameter) or, for a tile, a fresh scratch tile."""
        tile_op = REGISTRY.get(name)
        if tile_op is None:
            raise PassError(f"{name.replace('tile.', 'tensor.', 1)} has no tile-level form; it cannot "
                            f"run inside InCore function {self.fn.name!r}", span)
        names = {p.name for p in tile_op.params}
        unclaimed = [k for k in operands if k not in names]
        kw: dict[str, Any] = {}
        first_tile: Expr | None = None
        for p in tile_op.params:
            if p.name in attrs:
                kw[p.name] = attrs[p.name]
                continue
            if p.name in operands:
                value = operands[p.name]
            elif p.required and unclaimed:
                value = operands[unclaimed.pop(0)]
            elif p.required and p.kind == "tile" and first_tile is not None:
                value = self.scratch(first_tile, span)
            else:
                continue
            if p.kind in ("tile", "shaped"):
                value = self.as_tile(value, span)
                first_tile = first_tile or value
            kw[p.name] = value
        try:
            return make_call(tile_op, (), kw, span)
        except (OpTypeError, OpValueError) as e:
            raise PassError(f"cannot lower to {name} in {self.fn.name!r}: {e}", span) from None

    def flags(self, packed: Call, span) -> Call:
        """The BOOL tile of a packed `tile.cmp` mask (what `tensor.cmp` means): a `tile.sel`
        of ones and zeros."""
        shape = list(packed.args[0].type.shape)
        parts = [("mask", packed),
                 ("ones", make_call("tile.full", [shape], {"dtype": BOOL, "value": True}, span)),
                 ("zeros", make_call("tile.full", [shape], {"dtype": BOOL, "value": False}, span)),
                 ("tmp", make_call("tile.create", [[1, 32]], {"dtype": UINT8}, span))]
        bound = []
        for name, value in parts:
            var = Var(name, value.type, span)
            self.pending.append(Assign(var, value, span))
            bound.append(var)
        return make_call("tile.sel", bound, span=span)

    def scratch(self, like: Expr, span) -> Var:
        t: ShapedType = like.type
        alloc = make_call("tile.create", [list(t.shape)], {"dtype": t.dtype}, span)
        tmp = Var("tmp", alloc.type, span)
        self.pending.append(Assign(tmp, alloc, span))
        return tmp

    # -------------------------------------------------------------- statements
    def stmt_SeqStmts(self, s: SeqStmts) -> Stmt:
        out: list[Stmt] = []
        for x in s.stmts:
            new = self.stmt(x)
            out.extend(self.pending)
            self.pending = []
            out.append(new)
        return seq(out, s.span)

    def stmt_Assign(self, s: Assign) -> Stmt:
        value = self.expr(s.value)
        if isinstance(value, Call):
            value = self.convert_call(value, s.var.name)
            if isinstance(value, Var):  # an alias of a tile (see `reloaded`)
                self.mapping[s.var] = value
                return SeqStmts([], s.span)
        if value is s.value:
            return s
        var = Var(s.var.name, value.type, s.var.span)
        self.mapping[s.var] = var
        return Assign(var, value, s.span)

    def stmt_Eval(self, s: Eval) -> Stmt:
        value = self.expr(s.expr)
        if isinstance(value, Call):
            value = self.convert_call(value, "_")
        return s if value is s.expr else Eval(value, s.span)

    def bind_iter_arg(self, a: IterArg) -> IterArg:
        init = self.expr(a.init)
        if isinstance(init.type, TileType) and not isinstance(a.type, TileType):
            new = IterArg(a.name, init.type, init, a.span)
            self.mapping[a] = new
            return new
        return super().bind_iter_arg(a)

    def stmt_For(self, s: For) -> Stmt:
        new = super().stmt_For(s)
        return new.replace(return_vars=self._follow(s.return_vars, [a.type for a in new.iter_args]))

    def stmt_While(self, s: While) -> Stmt:
        new = super().stmt_While(s)
        return new.replace(return_vars=self._follow(s.return_vars, [a.type for a in new.iter_args]))

    def stmt_If(self, s: If) -> Stmt:
        new = super().stmt_If(s)
        stmts = flatten(new.then_body)
        if not stmts or not isinstance(stmts[-1], Yield):
            return new
        return new.replace(return_vars=self._follow(s.return_vars, [v.type for v in stmts[-1].values]))

    def _follow(self, old: tuple[Var, ...], types: list) -> tuple[Var, ...]:
        out = []
        for v, t in zip(old, types):
            if isinstance(t, TileType) and not isinstance(v.type, TileType):
                nv = Var(v.name, t, v.span)
                self.mapping[v] = nv
                out.append(nv)
            else:
                out.append(self.mapping.get(v, v))
        return tuple(out)

    def stmt_Return(self, s: Return) -> Stmt:
        stmts: list[Stmt] = []
        values = []
        for i, v in enumerate(self.expr(x) for x in s.values):
            if isinstance(v.type, TileType):
                out = Var(f"ret{i}", TensorType(v.type.shape, v.type.dtype), s.span)
                self.out_params.append(out)
                stored = Var(f"ret{i}_store", out.type, s.span)
                store = make_call("tile.store", [v, _zeros(v.type.rank), out], span=s.span)
                stmts.append(Assign(stored, store, s.span))
                values.append(stored)
            else:
                values.append(v)
        return seq([*stmts, Return(values, s.span)], s.span)


def convert_function(fn: Function, device: Device) -> Function:
    rows = _oversized_rows(fn, device)
    fn = (block_rows(fn, device, rows) if rows is not None else None) or tile_matmuls(fn, device) or fn
    conv = _Converter(fn, device)
    body = conv.stmt(seq([fn.body]) if not isinstance(fn.body, SeqStmts) else fn.body)
    body = seq([*conv.hoisted, *flatten(body)], fn.body.span)
    params = list(fn.params) + conv.out_params
    dirs = list(fn.param_directions) + [ParamDirection.Out] * len(conv.out_params)
    return fn.replace(params=tuple(params), param_directions=tuple(dirs), body=body)


def _oversized_rows(fn: Function, device: Device) -> int | None:
    """The static leading dim of the first tensor value of `fn` whose whole tile would not
    fit the Vec buffer (a compute result, or a tensor a compute op reads whole)."""
    cap = device.capacity(MemorySpace.Vec)
    for s in walk_stmts(fn.body):
        if not isinstance(s, Assign) or not isinstance(s.value, Call) or not _is_tensor_compute(s.value):
            continue
        name = s.value.op.name
        whole = [e for p, e in op_operands(s.value) if not (
            (name == "tensor.slice" and p == "input") or (name == "tensor.assemble" and p == "target"))]
        if name != "tensor.assemble":
            whole.append(s.var)
        for e in whole:
            t = e.type
            if isinstance(t, TensorType) and t.rank >= 1 and (t.nbytes or 0) > cap:
                return dim_value(t.shape[0])
    return None


class _CallSites(VarRewriter):
    """Pass an output buffer for every Out parameter a kernel gained: the caller's own unused
    `Out` parameter when the kernel's result is what the caller returns under that
    parameter's name (the kernel then writes straight into it), else a fresh `tensor.create`."""

    def __init__(self, caller: Function, added: dict[str, list[tuple[Var, int]]]) -> None:
        super().__init__()
        self.added = added
        self.direct = _direct_outputs(caller)

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, (SeqStmts, For, If, While, Scope, SplitAivScope)):
            return super().stmt(s)
        new = super().stmt(s)
        call = new.value if isinstance(new, Assign) else new.expr if isinstance(new, Eval) else None
        if not isinstance(call, Call) or not isinstance(call.op, GlobalVar) or call.op.name not in self.added:
            return new
        allocs, extra = [], []
        for p, position in self.added[call.op.name]:
            target = self.direct.pop((s.var, position), None) if isinstance(s, Assign) else None
            if target is None:
                target = Var(p.name, p.type, call.span)
                allocs.append(Assign(target, make_call("tensor.create", [list(p.type.shape)],
                                                       {"dtype": p.type.dtype}, call.span), call.span))
            extra.append(target)
        call = call.replace(args=call.args + tuple(extra))
        new = new.replace(value=call) if isinstance(new, Assign) else new.replace(expr=call)
        return seq([*allocs, new], s.span) if allocs else new


def _direct_outputs(fn: Function) -> dict[tuple[Var, int], Var]:
    """(call result Var, result position) -> the caller's Out parameter that value is
    returned as: a parameter of the same name (the source's rebinding of it) and type that
    the body never touches, so its buffer is free to receive the result."""
    if fn.func_type is not FunctionType.Orchestration:
        return {}
    stmts = flatten(fn.body)
    if not stmts or not isinstance(stmts[-1], Return):
        return {}
    used = used_vars(fn.body)
    free = {p.name: p for p, d in zip(fn.params, fn.param_directions)
            if d is ParamDirection.Out and p not in used}
    returned: dict[Var, Var] = {}
    for v in stmts[-1].values:
        if not isinstance(v, Var):
            continue
        p = free.get(v.name) or free.get(re.sub(r"_\d+$", "", v.name))  # `y_1`: y as printed after SSA
        if p is not None and structural_equal(p.type, v.type):
            returned[v] = free.pop(p.name)
    out: dict[tuple[Var, int], Var] = {}
    for s in walk_stmts(fn.body):
        if isinstance(s, Assign) and s.var in returned:
            if isinstance(s.value, Call):
                out[(s.var, 0)] = returned[s.var]
            elif isinstance(s.value, TupleGetItem) and isinstance(s.value.tuple, Var):
                out[(s.value.tuple, s.value.index)] = returned[s.var]
    return out


def _added_outputs(old: Function, new: Function) -> list[tuple[Var, int]]:
    """The Out parameters `new` gained over `old`, each with the result position it returns."""
    stmts = flatten(new.body)
    ret = stmts[-1] if stmts and isinstance(stmts[-1], Return) else Return([])
    roots = alias_roots(new.body, {})
    position = {roots.get(v, v): i for i, v in enumerate(ret.values) if isinstance(v, Var)}
    return [(p, position.get(p, -1)) for p in new.params[len(old.params):]]


def is_kernel(fn: Function) -> bool:
    return fn.func_type is FunctionType.InCore


@register_pass
class ConvertTensorToTileOps(Pass):
    name = "ConvertTensorToTileOps"
    required = frozenset({"SplitIncoreOrch", "CallsFlattened"})
    produced = frozenset({"IncoreTileOps"})

    def __init__(self, device: Device | None = None) -> None:
        self.device = device

    def run(self, program: Program) -> Program:
        device = self.device or target_device()
        functions: dict[str, Function] = {}
        added: dict[str, list[tuple[Var, int]]] = {}
        for name, fn in program.functions.items():
            if is_kernel(fn) and _has_tensor_ops(fn):
                new = convert_function(fn, device)
                if len(new.params) > len(fn.params):
                    added[name] = _added_outputs(fn, new)
                functions[name] = new
            else:
                functions[name] = fn
        for name, fn in functions.items():
            if is_kernel(fn):
                functions[name] = _written_in_params_as_in_out(fn, program.functions)
        if added:
            for name, fn in functions.items():
                if any(isinstance(c.op, GlobalVar) and c.op.name in added for c in calls_in(fn.body)):
                    functions[name] = fn.replace(body=_CallSites(fn, added).stmt(fn.body))
        if all(functions[n] is f for n, f in program.functions.items()):
            return program
        return program.with_functions(list(functions.values()))


def _written_in_params_as_in_out(fn: Function, functions) -> Function:
    """A kernel writing an `In` parameter makes it `InOut` (as the reference upgrades it), so
    the task's write is ordered against every other reader and writer of that tensor."""
    written = written_params(fn, functions)
    dirs = tuple(ParamDirection.InOut if d is ParamDirection.In and p in written else d
                 for p, d in zip(fn.params, fn.param_directions))
    return fn if dirs == fn.param_directions else fn.replace(param_directions=dirs)


def _has_tensor_ops(fn: Function) -> bool:
    return any(_is_tensor_compute(c) for c in calls_in(fn.body))


def _is_tensor_compute(c: Call) -> bool:
    return isinstance(c.op, Op) and c.op.namespace == "tensor" and c.op.name not in KEEP and not (
        c.op.name in ("tensor.read", "tensor.write") and isinstance(c.args[0].type, TensorType))


def check_incore_tile_ops(program: Program) -> None:
    for fn in program.functions.values():
        if not fn.func_type.is_core:
            continue
        for c in calls_in(fn.body):
            if _is_tensor_compute(c):
                raise PassError(f"tensor op {c.op.name} is left in core function {fn.name!r}", c.span)


register_property("IncoreTileOps", check_incore_tile_ops,
                  "core functions compute on tiles (no tensor-level compute op is left)")
