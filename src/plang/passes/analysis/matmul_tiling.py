"""Matmul tiling: a tensor-level `pl.matmul` whose operands would not fit the Mat buffer they
are staged in, or whose result would not fit the Acc or Vec buffer (operands that only exceed
L0 are split at L0: see TileCapacity), becomes loops over `[m, n]` output blocks, each reducing
K in `k`-wide chunks (`matmul` on the first chunk, `matmul_acc` on the rest). ConvertTensorToTileOps runs it
when row blocking does not apply.

`(m, n, k)` divide `(M, N, K)` and are chosen so that an `[m, k]` lhs block fits Left, a
`[k, n]` rhs block fits Right and the `[m, n]` accumulator fits Acc, at the least estimated
cost (operand bytes loaded, plus a fixed charge per block matmul). Where each block goes
depends on how the result is used:

- a single `[M, N]` block (only K is split): the K loop computes the result in place;
- the result's one use is `pl.assemble(t, c, offset)`: each block is assembled straight
  into `t` (a DDR output: a direct store) at its place;
- otherwise the result is gathered block by block into an on-chip scratch tensor that
  takes its place; when its one use is a `pl.cast`, each block is cast on the way, so the
  scratch holds the narrow type (a chained `matmul -> cast -> matmul` keeps its bf16
  intermediate on chip). The scratch must fit the Vec buffer.

A batched matmul (rank-3 operands with one static batch count) whose whole operands would
not fit Mat, and whose result's one use is `pl.assemble(t, c, offset)`, becomes a loop over
the batches, each multiplying its own `[1, ., .]` slices (transpose flags kept) and assembling
its result into `t`.

Other matmuls with transpose flags, a narrowing `out_dtype`, dynamic shapes, or no fitting
block are left as they are (the capacity check then reports them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...dtypes import INDEX
from ...ir.enums import MemorySpace
from ...ir.expr import Add, Call, ConstInt, Expr, IterArg, MakeTuple, Mul, Var
from ...ir.function import Function
from ...ir.ops import make_call
from ...ir.ops.registry import Op
from ...ir.stmt import Assign, For, If, Stmt, While, Yield, flatten, seq
from ...ir.types import ScalarType, TensorType, dim_value
from ...target import Device
from .var_uses import expr_vars, used_vars

#: the charge, in bytes of operand traffic, of one block matmul (loop and load overhead)
BLOCK_COST = 16 * 1024


@dataclass(frozen=True)
class Tiling:
    m: int
    n: int
    k: int


def _divisors(x: int) -> list[int]:
    return [d for d in range(1, x + 1) if x % d == 0]


def choose_tiling(M: int, N: int, K: int, lhs_bytes: int, rhs_bytes: int, acc_bytes: int,
                  device: Device) -> Tiling | None:
    """The cheapest `(m, n, k)` whose blocks fit Left / Right / Acc (None when none does)."""
    left, right, acc = (device.capacity(s) for s in (MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc))
    best: tuple[int, int, Tiling] | None = None
    for m in _divisors(M):
        for n in _divisors(N):
            if m * n * acc_bytes > acc:
                continue
            for k in _divisors(K):
                if m * k * lhs_bytes > left or k * n * rhs_bytes > right:
                    continue
                blocks = (M // m) * (N // n) * (K // k)
                cost = M * K * lhs_bytes * (N // n) + K * N * rhs_bytes * (M // m) + BLOCK_COST * blocks
                key = (cost, -m * n * k, Tiling(m, n, k))
                if best is None or key[:2] < best[:2]:
                    best = key
    return None if best is None else best[2]


def _static_2d(t: object) -> tuple[int, int] | None:
    if not isinstance(t, TensorType) or t.rank != 2:
        return None
    dims = (dim_value(t.shape[0]), dim_value(t.shape[1]))
    return None if None in dims else dims  # type: ignore[return-value]


def _nbytes(t: TensorType, *dims: int) -> int:
    count = 1
    for d in dims:
        count *= d
    return (t.dtype.bits * count + 7) // 8


def _op_call(s: Stmt, name: str) -> Call | None:
    if isinstance(s, Assign) and isinstance(s.value, Call) and isinstance(s.value.op, Op) \
            and s.value.op.name == name:
        return s.value
    return None


def _plan(call: Call, var: Var, device: Device) -> Tiling | None:
    """The tiling of oversized tensor matmul `call` (None: it fits, or it cannot be tiled)."""
    lhs, rhs = call.args
    if any(call.kwargs.get(f) for f in ("a_trans", "b_trans", "c_matrix_nz")):
        return None
    a, b, c = _static_2d(lhs.type), _static_2d(rhs.type), _static_2d(var.type)
    if a is None or b is None or c is None:
        return None
    (M, K), N = a, b[1]
    acc = make_call("tensor.matmul", [lhs, rhs]).type  # the accumulator dtype
    if var.type.dtype is not acc.dtype:
        return None
    la, lb, lc = _nbytes(lhs.type, M, K), _nbytes(rhs.type, K, N), _nbytes(acc, M, N)
    mat = device.capacity(MemorySpace.Mat)  # operands over L0 are split at L0 (TileCapacity)
    result_cap = max(device.capacity(MemorySpace.Acc), device.capacity(MemorySpace.Vec))
    if la <= mat and lb <= mat and lc <= result_cap:
        return None
    return choose_tiling(M, N, K, _nbytes(lhs.type, 1), _nbytes(rhs.type, 1), _nbytes(acc, 1), device)


def _batches(call: Call, var: Var, device: Device) -> int | None:
    """The batch count of batched tensor matmul `call` when it must run batch by batch."""
    types = (call.args[0].type, call.args[1].type, var.type)
    if not all(isinstance(t, TensorType) and t.rank == 3 for t in types):
        return None
    dims = [[dim_value(d) for d in t.shape] for t in types]
    if any(None in d for d in dims) or len({d[0] for d in dims}) != 1 or dims[0][0] < 2:
        return None
    count, mat = dims[0][0], device.capacity(MemorySpace.Mat)
    sizes = [_nbytes(t, *d) for t, d in zip(types, dims)]
    if max(sizes[:2]) <= mat or max(sizes[:2]) > mat * count:
        return None
    return count


def _per_batch(call: Call, count: int, use: Assign) -> Stmt:
    """`use` (`t' = pl.assemble(t, c, offset)` of `c = call`) as a loop over the batches."""
    sp = call.span
    target, _, offset = use.value.args
    off = list(offset.elements) if isinstance(offset, MakeTuple) else list(offset)
    bi = Var("bi", ScalarType(INDEX), sp)
    body: list[Stmt] = []
    parts = []
    for operand, name in zip(call.args, ("a_batch", "b_batch")):
        window = make_call("tensor.slice", [operand, [ConstInt(1), *operand.type.shape[1:]],
                                            [bi, ConstInt(0), ConstInt(0)]], span=sp)
        parts.append(Var(name, window.type, sp))
        body.append(Assign(parts[-1], window, sp))
    product = make_call(call.op, parts, dict(call.kwargs), sp)
    c = Var("c_batch", product.type, sp)
    carried = IterArg(use.var.name, target.type, target, sp)
    put = make_call("tensor.assemble", [carried, c, [_shift(off[0], bi), *off[1:]]], dict(use.value.kwargs),
                    use.span)
    placed = Var(use.var.name, put.type, use.span)
    body += [Assign(c, product, sp), Assign(placed, put, use.span), Yield([placed], sp)]
    return For(bi, ConstInt(0), ConstInt(count), ConstInt(1), seq(body, sp), [carried], [use.var], span=sp)


def _shift(base: Expr, delta: Expr) -> Expr:
    if dim_value(delta) == 0:
        return base
    return delta if dim_value(base) == 0 else Add(base, delta)


Views = dict[Var, tuple[Expr, list[Expr]]]  # a plain 2D slice -> (its source, its offset)


def _view(s: Stmt) -> tuple[Expr, list[Expr]] | None:
    """(source, offset) when `s` is `v = pl.slice(src, shape, offset)` of a same-rank, fully valid
    window (a block of `v` is then read from `src` directly)."""
    call = _op_call(s, "tensor.slice")
    if call is None or set(call.kwargs) - {"clamp"} or call.kwargs.get("clamp") or \
            call.args[0].type.rank != s.var.type.rank:
        return None
    offset = call.args[2]
    return call.args[0], list(offset.elements) if isinstance(offset, MakeTuple) else list(offset)


class _Builder:
    """Emits the block loops of one tiled matmul `c = lhs @ rhs`."""

    def __init__(self, call: Call, tiling: Tiling, views: Views) -> None:
        self.lhs, self.rhs = call.args
        self.views = views
        self.span = call.span
        self.t = tiling
        self.M, self.K = _static_2d(self.lhs.type)
        self.N = _static_2d(self.rhs.type)[1]

    def index(self, name: str) -> Var:
        return Var(name, ScalarType(INDEX), self.span)

    def panel(self, src: Expr, shape: tuple[int, int], offset: list[Expr], out: list[Stmt],
              name: str) -> Expr:
        """`src[offset : offset + shape]` (`src` itself when that is all of it; read from the
        source of `src` when `src` is a plain slice)."""
        if shape == _static_2d(src.type):
            return src
        if src in self.views:
            src, origin = self.views[src]
            offset = [_shift(o, d) for o, d in zip(origin, offset)]
        call = make_call("tensor.slice", [src, [ConstInt(d) for d in shape], offset], span=self.span)
        v = Var(name, call.type, self.span)
        out.append(Assign(v, call, self.span))
        return v

    def product(self, row: Expr, col: Expr, out: list[Stmt], result: Var | None = None) -> Var:
        """Append the statements computing block `[row:+m, col:+n]` of the product; returns its Var
        (`result` when given)."""
        m, n, k = self.t.m, self.t.n, self.t.k
        sp = self.span
        a0 = self.panel(self.lhs, (m, k), [row, ConstInt(0)], out, "a_blk")
        b0 = self.panel(self.rhs, (k, n), [ConstInt(0), col], out, "b_blk")
        first = make_call("tensor.matmul", [a0, b0], span=sp)
        steps = self.K // k
        c0 = result if result is not None and steps == 1 else Var("c_blk", first.type, sp)
        out.append(Assign(c0, first, sp))
        if steps == 1:
            return c0
        done = result if result is not None else Var("c_blk", first.type, sp)
        if steps == 2:  # one more chunk: no loop
            self.chunk(c0, row, col, ConstInt(k), out, done)
            return done
        kb = self.index("kb")
        acc = IterArg("c_acc", first.type, c0, sp)
        body: list[Stmt] = []
        c1 = self.chunk(acc, row, col, Mul(kb, ConstInt(k)), body, Var("c_blk", first.type, sp))
        body.append(Yield([c1], sp))
        out.append(For(kb, ConstInt(1), ConstInt(steps), ConstInt(1), seq(body, sp), [acc], [done], span=sp))
        return done

    def chunk(self, acc: Expr, row: Expr, col: Expr, kk: Expr, out: list[Stmt], result: Var) -> Var:
        """Append `result = acc + lhs[row:+m, kk:+k] @ rhs[kk:+k, col:+n]`."""
        m, n, k = self.t.m, self.t.n, self.t.k
        ak = self.panel(self.lhs, (m, k), [row, kk], out, "a_blk")
        bk = self.panel(self.rhs, (k, n), [kk, col], out, "b_blk")
        out.append(Assign(result, make_call("tensor.matmul_acc", [acc, ak, bk], span=self.span), self.span))
        return result

    def grid(self, target: Expr, place: Callable[[Expr, Expr, Expr, list[Stmt]], Expr], result: Var) -> Stmt:
        """Loops over the output blocks carrying `target`; `place(row, col, current, out)`
        appends one block's statements and returns the updated target. Binds `result`."""
        sp = self.span
        axes = [(count, size, name) for count, size, name in
                ((self.M // self.t.m, self.t.m, "mb"), (self.N // self.t.n, self.t.n, "nb")) if count > 1]

        def level(i: int, offsets: dict[str, Expr], current: Expr) -> tuple[list[Stmt], Expr]:
            if i == len(axes):
                out: list[Stmt] = []
                row, col = (offsets.get(a, ConstInt(0)) for a in ("mb", "nb"))
                return out, place(row, col, current, out)
            count, size, name = axes[i]
            iv = self.index(name)
            it = IterArg(f"{result.name}_{name}", current.type, current, sp)
            body, new = level(i + 1, {**offsets, name: Mul(iv, ConstInt(size))}, it)
            done = result if i == 0 else Var(f"{result.name}_{name}", current.type, sp)
            loop = For(iv, ConstInt(0), ConstInt(count), ConstInt(1), seq([*body, Yield([new], sp)], sp),
                       [it], [done], span=sp)
            return [loop], done

        return seq(level(0, {}, target)[0], sp)


def _rewrite(stmts: list[Stmt], device: Device, views: Views) -> list[Stmt] | None:
    """`stmts` with their oversized matmuls tiled (None when nothing changed); a plain slice
    the tiled blocks read around is dropped when nothing else uses it."""
    out: list[Stmt] = []
    changed = False
    deferred: dict[int, Stmt] = {}  # position of a consumer -> the loops that replace it
    for i, s in enumerate(stmts):
        if i in deferred:
            out.append(deferred.pop(i))
            continue
        view = _view(s)
        if view is not None:
            views[s.var] = view
        nested = _nested(s, device, views)
        call = _op_call(s, "tensor.matmul")
        count = _batches(call, s.var, device) if call is not None else None
        tiling = _plan(call, s.var, device) if call is not None and count is None else None
        placed = _place(_Builder(call, tiling, views), s, stmts, i, device) if tiling is not None else None
        if count is not None:
            use = _sole_use(s.var, stmts, i)
            placed = (stmts.index(use), _per_batch(call, count, use)) if use is not None and \
                _assembles(use, s.var) else None
        if nested is None and placed is None:
            out.append(s)
            continue
        changed = True
        if nested is not None:
            out.append(nested)
        else:
            at, loops = placed
            if at == i:
                out.append(loops)
            else:
                deferred[at] = loops
    if not changed:
        return None
    return [s for i, s in enumerate(out) if not (
        isinstance(s, Assign) and s.var in views and not any(s.var in used_vars(x) for x in out[i + 1:]))]


def _place(b: _Builder, s: Assign, stmts: list[Stmt], i: int, device: Device) -> tuple[int, Stmt] | None:
    """(position, loops): the tiled form of matmul `stmts[i]` and the statement it replaces
    (itself, or its consumer, when only pure ops lie between them)."""
    c = s.var
    if (b.t.m, b.t.n) == (b.M, b.N):
        body: list[Stmt] = []
        b.product(ConstInt(0), ConstInt(0), body, c)
        return i, seq(body, s.span)
    use = _sole_use(c, stmts, i)
    if use is not None and _assembles(use, c):
        return stmts.index(use), _direct(b, use)
    cast = use if use is not None and _op_call(use, "tensor.cast") is not None else None
    final = cast.var if cast is not None else c
    if final.type.nbytes is None or final.type.nbytes > device.capacity(MemorySpace.Vec):
        return None
    return (stmts.index(cast) if cast is not None else i), _scratch(b, final, cast)


def _sole_use(c: Var, stmts: list[Stmt], i: int) -> Stmt | None:
    """The one statement after `stmts[i]` using `c`, when only pure ops lie between them."""
    users = [j for j in range(i + 1, len(stmts)) if c in used_vars(stmts[j])]
    return stmts[users[0]] if len(users) == 1 and all(_pure(x) for x in stmts[i + 1:users[0]]) else None


def _pure(s: Stmt) -> bool:
    return isinstance(s, Assign) and (not isinstance(s.value, Call) or (
        isinstance(s.value.op, Op) and s.value.op.facts.pure))


def _assembles(use: Stmt, c: Var) -> bool:
    """`use` is `t' = pl.assemble(t, c, offset)` with `c` only as the source."""
    call = _op_call(use, "tensor.assemble")
    return call is not None and call.args[1] is c and c not in expr_vars(call.args[0]) \
        and c not in expr_vars(call.args[2])


def _direct(b: _Builder, use: Assign) -> Stmt:
    """Assemble each block straight into the target of `use` (`t' = pl.assemble(t, c, off)`)."""
    target, _, offset = use.value.args
    off = list(offset.elements) if isinstance(offset, MakeTuple) else list(offset)

    def place(row: Expr, col: Expr, cur: Expr, body: list[Stmt]) -> Expr:
        blk = b.product(row, col, body)
        call = make_call("tensor.assemble", [cur, blk, [_shift(off[0], row), _shift(off[1], col)]],
                         dict(use.value.kwargs), use.span)
        v = Var(use.var.name, call.type, use.span)
        body.append(Assign(v, call, use.span))
        return v

    return b.grid(target, place, use.var)


def _scratch(b: _Builder, final: Var, cast: Assign | None) -> Stmt:
    """Gather the blocks (cast by `cast` when given) into a new tensor bound to `final`."""
    sp = b.span
    alloc = make_call("tensor.create", [list(final.type.shape)], {"dtype": final.type.dtype}, sp)
    init = Var(f"{final.name}_scratch", alloc.type, sp)

    def place(row: Expr, col: Expr, cur: Expr, body: list[Stmt]) -> Expr:
        blk = b.product(row, col, body)
        if cast is not None:
            conv = make_call(cast.value.op, [blk], dict(cast.value.kwargs), cast.span)
            blk = Var(f"{final.name}_blk", conv.type, sp)
            body.append(Assign(blk, conv, cast.span))
        put = make_call("tensor.assemble", [cur, blk, [row, col]], span=sp)
        v = Var(final.name, put.type, sp)
        body.append(Assign(v, put, sp))
        return v

    return seq([Assign(init, alloc, sp), b.grid(init, place, final)], sp)


def _nested(s: Stmt, device: Device, views: Views) -> Stmt | None:
    """`s` (a loop or branch) with the matmuls of its bodies tiled, or None when none was."""
    if isinstance(s, (For, While)):
        body = _rewrite(flatten(s.body), device, views)
        return None if body is None else s.replace(body=seq(body, s.body.span))
    if isinstance(s, If):
        then = _rewrite(flatten(s.then_body), device, views)
        other = _rewrite(flatten(s.else_body), device, views) if s.else_body is not None else None
        if then is None and other is None:
            return None
        return s.replace(then_body=seq(then, s.then_body.span) if then is not None else s.then_body,
                         else_body=seq(other, s.else_body.span) if other is not None else s.else_body)
    return None


def tile_matmuls(fn: Function, device: Device) -> Function | None:
    """`fn` with its oversized tensor matmuls tiled (see the module doc), or None when it has none
    that can be."""
    body = _rewrite(flatten(fn.body), device, {})
    return None if body is None else fn.replace(body=seq(body, fn.body.span))
