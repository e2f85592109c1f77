"""AutoTileMatmulL0: a cube matmul too large for one L0 block becomes a loop of L0-sized blocks.

A `tile.matmul(lhs, rhs)` / `tile.matmul_acc(acc, lhs, rhs)` of static 2D tiles in an InCore
function, whose operands sit in Mat (or have no memory yet), gets its `(m, n, k)` block and
schedule from `l0_tile_chooser` (the configured backend's L0A / L0B / L0C sizes; A- and
B-stationary allowed, a K tail peeled; a double-buffered L0C under the DSA_RP / PTOAS planners
or `PassContext(enable_pypto_l0c_double_buffer=True)`):

- the whole output fits L0C (`m, n == M, N`): a `pl.pipeline(0, K, k, stage=2)` loop extracts
  `[M, k]` / `[k, N]` slabs into Left / Right and accumulates (`tile.matmul` on the first
  block, `tile.matmul_acc` after); a K tail that is not a whole block follows the loop;
- the output does not fit, the result's only use is one `tile.store`: the output is tiled.
  With a full-K block the held operand's axis is a sequential outer loop and the other a
  pipelined inner loop storing each `[m, n]` block (`pipeline_double_buffer_c` marks a
  double-buffered accumulator); partial boundary blocks follow straight-line. With a split K
  every output block gets its own K loop.

The rewrite keeps the program's meaning (the blocks compute the same sums); plang's own
kernels do not need it — the simulated cube has no L0 limits — so the default pipeline does
not run it. Matmuls it cannot tile keep their form.
"""

from __future__ import annotations

from collections.abc import Callable

from ..backend import BackendType
from ..backend.config import get_backend_type, is_backend_configured
from ..dtypes import INDEX
from ..ir.enums import ForKind, MemorySpace
from ..ir.expr import Call, ConstInt, Eq, Expr, IterArg, Var
from ..ir.function import Function, Program
from ..ir.ops import make_call
from ..ir.ops.registry import Op
from ..ir.stmt import Assign, For, If, SeqStmts, Stmt, Yield, flatten, seq
from ..ir.types import ScalarType, TileType, dim_value
from ..ir.visitor import IRMutator
from ..pypto_core.l0_tile_chooser import L0TileConfig, L0TileResult, Stationarity, choose_l0_tile
from ..pypto_core.passes import MemoryPlanner
from .analysis.outliner import use_counts
from .context import PassContext
from .framework import FunctionPass, register_pass

# each backend's L0 sizes and calibrated cost model (the chooser's defaults are Ascend910B's)
_L0 = {BackendType.Ascend910B: {"l0a_bytes": 64 * 1024, "l0b_bytes": 64 * 1024, "l0c_bytes": 128 * 1024},
       BackendType.Ascend950: {"l0a_bytes": 64 * 1024, "l0b_bytes": 64 * 1024, "l0c_bytes": 256 * 1024,
                               "bw_a": 206.3, "bw_b": 223.8, "bw_drain": 30.0, "drain_fixed_cycles": 343.4,
                               "drain_row_cycles": 4.59, "drain_penalty_cycles": 0.26, "mad_head": 25,
                               "mad_fp32_passes": 8}}
_OPERAND_SPACES = (None, MemorySpace.Mat)
_DBC_PLANNERS = (MemoryPlanner.DSA_RP, MemoryPlanner.PTOAS)


def _static_2d(v: Expr) -> tuple[int, int] | None:
    if not (isinstance(v, Var) and isinstance(v.type, TileType) and len(v.type.shape) == 2):
        return None
    dims = tuple(dim_value(d) for d in v.type.shape)
    return None if None in dims or v.type.valid_shape is not None else dims  # type: ignore[return-value]


def _config(M: int, N: int, K: int, lhs: Var, rhs: Var, out: TileType, accumulates: bool) -> L0TileConfig:
    backend = get_backend_type() if is_backend_configured() else BackendType.Ascend910B
    cfg = L0TileConfig()
    cfg.M, cfg.N, cfg.K = M, N, K
    for field, value in _L0[backend].items():
        setattr(cfg, field, value)
    cfg.bytes_a, cfg.bytes_b, cfg.bytes_c = (max(1, t.dtype.bits // 8) for t in (lhs.type, rhs.type, out))
    cfg.allow_a_stationary = cfg.allow_b_stationary = cfg.allow_k_boundary = True
    cfg.c_read = accumulates
    options = PassContext.current().config
    cfg.allow_double_buffer_c = options.get("memory_planner") in _DBC_PLANNERS or bool(
        options.get("enable_pypto_l0c_double_buffer"))
    return cfg


class _Emitter:
    """Builds the statements of one tiled matmul."""

    def __init__(self, lhs: Var, rhs: Var, out: TileType, name: str) -> None:
        self.lhs, self.rhs, self.out, self.name = lhs, rhs, out, name
        self.stmts: list[Stmt] = []

    def bind(self, name: str, value: Expr) -> Var:
        var = Var(f"{self.name}_{name}", value.type)
        self.stmts.append(Assign(var, value))
        return var

    def extract(self, operand: Var, row: Expr | int, col: Expr | int, shape: list[int], space: MemorySpace,
                name: str) -> Var:
        call = make_call("tile.extract", [operand, _idx(row), _idx(col), shape], {"target_memory": space})
        return self.bind(name, call)

    def operands(self, mi: Expr | int, ni: Expr | int, ko: Expr | int, m: int, n: int,
                 k: int) -> tuple[Var, Var]:
        return (self.extract(self.lhs, mi, ko, [m, k], MemorySpace.Left, "a"),
                self.extract(self.rhs, ko, ni, [k, n], MemorySpace.Right, "b"))

    def mad(self, a: Var, b: Var, acc: Var | None, into: Var | None = None) -> Var:
        """`a @ b` (into `acc` when given) as an Acc tile bound to `into` or a fresh Var."""
        call = make_call("tile.matmul", [a, b], {"out_dtype": self.out.dtype}) if acc is None \
            else make_call("tile.matmul_acc", [acc, a, b])
        var = into or Var(f"{self.name}_c", TileType(call.type.shape, call.type.dtype, MemorySpace.Acc))
        self.stmts.append(Assign(var, call))
        return var

    def block(self, mi: Expr | int, ni: Expr | int, ko: Expr | int, m: int, n: int, k: int,
              acc: Var | None, into: Var | None = None) -> Var:
        """One `[m, k] x [k, n]` block matmul, accumulating into `acc` when given."""
        return self.mad(*self.operands(mi, ni, ko, m, n, k), acc, into)

    def k_reduction(self, mi: Expr | int, ni: Expr | int, m: int, n: int, k: int, K: int,
                    acc: Var | None, into: Var | None = None) -> Var:
        """`sum over K` of block matmuls into an `[m, n]` accumulator (fresh when `acc` is None),
        the result bound to `into` when given."""
        full = K // k * k
        tail = K - full
        if full // k >= 2:
            fresh = acc is None
            if fresh:
                create = {"dtype": self.out.dtype, "target_memory": MemorySpace.Acc}
                acc = self.bind("init", make_call("tile.create", [[m, n]], create))
            carried = IterArg(f"{self.name}_iter", acc.type, acc)
            ko = Var(f"{self.name}_ko", ScalarType(INDEX))
            body = _Emitter(*self.args())
            a, b = body.operands(mi, ni, ko, m, n, k)
            if fresh:
                first, rest = _Emitter(*self.args()), _Emitter(*self.args())
                c0, c1 = first.mad(a, b, None), rest.mad(a, b, carried)
                result = Var(f"{self.name}_phi", carried.type)
                body.stmts.append(If(Eq(ko, ConstInt(0)), seq(first.stmts + [Yield((c0,))]),
                                     seq(rest.stmts + [Yield((c1,))]), (result,)))
            else:
                result = body.mad(a, b, carried)
            done = (into if not tail else None) or Var(f"{self.name}_k", carried.type)
            self.stmts.append(For(ko, ConstInt(0), ConstInt(full), ConstInt(k),
                                  seq(body.stmts + [Yield((result,))]), (carried,), (done,),
                                  ForKind.Pipeline, {"stage": 2}))
            acc = done
        elif full:
            acc = self.block(mi, ni, 0, m, n, k, acc, into if not tail else None)
        if tail:
            acc = self.block(mi, ni, full, m, n, tail, acc, into)
        return acc

    def args(self) -> tuple[Var, Var, TileType, str]:
        return self.lhs, self.rhs, self.out, self.name


def _idx(v: Expr | int) -> Expr:
    return ConstInt(v) if isinstance(v, int) else v


def _grid_full_k(em: _Emitter, choice: L0TileResult, M: int, N: int, K: int, out: Var,
                 store: Call) -> Var:
    """The output-tiled schedule with a full-K block: held axis outer, moving axis pipelined."""
    m, n = choice.m, choice.n
    rows_outer = choice.stationarity is Stationarity.AStationary or (
        choice.stationarity is Stationarity.OutputStationary and choice.os_holds_a)
    held_extent, held_tile, move_extent, move_tile = (M, m, N, n) if rows_outer else (N, n, M, m)
    held_full, move_full = held_extent // held_tile * held_tile, move_extent // move_tile * move_tile
    attrs = {"stage": 2, "pipeline_overlap_stores": False}
    if choice.double_buffer_c:
        attrs["pipeline_double_buffer_c"] = True

    def place(e: _Emitter, h: Expr | int, v: Expr | int, ht: int, vt: int, target: Var) -> Var:
        mi, ni, mt, nt = (h, v, ht, vt) if rows_outer else (v, h, vt, ht)
        c = e.block(mi, ni, 0, mt, nt, K, None)
        return e.bind("out", make_call("tile.store", [c, [_idx(mi), _idx(ni)], target], _store_kwargs(store)))

    def row(e: _Emitter, h: Expr | int, ht: int, target: Var, kind: ForKind, loop_attrs: dict) -> Var:
        """Every block along the moving axis at held offset `h`."""
        if move_full // move_tile >= 2:
            v = Var(f"{em.name}_v", ScalarType(INDEX))
            carried = IterArg(f"{em.name}_out_in", target.type, target)
            inner = _Emitter(*em.args())
            result = place(inner, h, v, ht, move_tile, carried)
            done = Var(f"{em.name}_out_row", target.type)
            e.stmts.append(For(v, ConstInt(0), ConstInt(move_full), ConstInt(move_tile),
                               seq(inner.stmts + [Yield((result,))]), (carried,), (done,), kind, loop_attrs))
            target = done
        elif move_full:
            target = place(e, h, 0, ht, move_tile, target)
        if move_extent > move_full:
            target = place(e, h, move_full, ht, move_extent - move_full, target)
        return target

    if held_full // held_tile >= 2:
        h = Var(f"{em.name}_h", ScalarType(INDEX))
        carried = IterArg(f"{em.name}_out_outer", out.type, out)
        outer = _Emitter(*em.args())
        result = row(outer, h, held_tile, carried, ForKind.Pipeline, attrs)
        done = Var(f"{em.name}_out_rows", out.type)
        em.stmts.append(For(h, ConstInt(0), ConstInt(held_full), ConstInt(held_tile),
                            seq(outer.stmts + [Yield((result,))]), (carried,), (done,),
                            ForKind.Sequential, {}))
        target = done
    else:
        target = row(em, 0, held_tile, out, ForKind.Pipeline, attrs) if held_full else out
    if held_extent > held_full:
        target = row(em, held_full, held_extent - held_full, target, ForKind.Sequential, {})
    return target


def _grid_split_k(em: _Emitter, choice: L0TileResult, M: int, N: int, K: int, out: Var, store: Call) -> Var:
    """The output-tiled schedule with a split K: a K loop per `[m, n]` output block."""
    target = out
    for mi in range(0, M, choice.m):
        for ni in range(0, N, choice.n):
            c = em.k_reduction(mi, ni, min(choice.m, M - mi), min(choice.n, N - ni), choice.k, K, None)
            target = em.bind("out", make_call("tile.store", [c, [mi, ni], target], _store_kwargs(store)))
    return target


def _store_kwargs(store: Call) -> dict:
    return {k: v for k, v in store.kwargs.items() if k in ("atomic",)}


def _store_of(stmt: Stmt, c: Var) -> Call | None:
    """`x = tile.store(c, [0, 0], t)` of the whole of `c`."""
    v = stmt.value if isinstance(stmt, Assign) else None
    if not (isinstance(v, Call) and isinstance(v.op, Op) and v.op.name == "tile.store" and v.args[0] is c):
        return None
    offsets = v.args[1]
    zero = all(dim_value(o) == 0 for o in getattr(offsets, "elements", (offsets,)))
    return v if zero and "shapes" not in v.kwargs and isinstance(v.args[2], Var) else None


class _Tiler(IRMutator):
    mutate_types = False

    def __init__(self, counts) -> None:
        super().__init__()
        self.counts = counts

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        s = super().visit_SeqStmts(s)
        stmts = flatten(s)
        out: list[Stmt] = []
        i = 0
        while i < len(stmts):
            st = stmts[i]
            nxt = stmts[i + 1] if i + 1 < len(stmts) else None
            tiled, used_next = self.tile(st, nxt)
            out.extend(tiled)
            i += 2 if used_next else 1
        unchanged = len(out) == len(stmts) and all(a is b for a, b in zip(out, stmts))
        return s if unchanged else SeqStmts(tuple(out))

    def tile(self, st: Stmt, nxt: Stmt | None) -> tuple[list[Stmt], bool]:
        keep = ([st], False)
        call = st.value if isinstance(st, Assign) else None
        if not (isinstance(call, Call) and isinstance(call.op, Op)
                and call.op.name in ("tile.matmul", "tile.matmul_acc")):
            return keep
        if any(call.kwargs.get(f) for f in ("a_trans", "b_trans", "c_matrix_nz", "init_cond")):
            return keep
        accumulates = call.op.name == "tile.matmul_acc"
        acc, lhs, rhs = (call.args if accumulates else (None, *call.args))
        a, b = _static_2d(lhs), _static_2d(rhs)
        out = st.var.type
        if a is None or b is None or not isinstance(out, TileType) or a[1] != b[0] or \
                lhs.type.memory_space not in _OPERAND_SPACES or rhs.type.memory_space not in _OPERAND_SPACES:
            return keep
        (M, K), N = a, b[1]
        if K % 16 or min(M, N, K) < 16:
            return keep
        try:
            choice = choose_l0_tile(_config(M, N, K, lhs, rhs, out, accumulates))
        except ValueError:
            return keep
        if (choice.m, choice.n, choice.k) == (M, N, K):
            return keep
        em = _Emitter(lhs, rhs, out, st.var.name)
        if (choice.m, choice.n) == (M, N):
            em.k_reduction(0, 0, M, N, choice.k, K, acc, st.var)
            return em.stmts, False
        store = _store_of(nxt, st.var) if nxt is not None else None
        if accumulates or store is None or self.counts[st.var] != 1:
            return keep
        grid: Callable = _grid_full_k if choice.k == K else _grid_split_k
        target = grid(em, choice, M, N, K, store.args[2], store)
        return em.stmts + [Assign(nxt.var, target)], True


@register_pass
class AutoTileMatmulL0(FunctionPass):
    name = "AutoTileMatmulL0"

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not fn.func_type.is_core or fn.body is None:
            return fn
        body = _Tiler(use_counts(fn.body)).visit_stmt(fn.body)
        if not isinstance(body, SeqStmts) and body is not fn.body:
            body = seq([body])
        return fn if body is fn.body else fn.replace(body=body)
