"""InferTileMemorySpace: give every tile of a core function its on-chip buffer.

A tile's space follows its producer: matmul-family results live in Acc; a load feeding a
matmul goes to Mat, any other load to Vec; `tile.move` says where it goes; allocations
go to Vec unless a loop carries them (below); everything the vector unit computes is Vec.
A loop-carried tile takes the space its loop body yields (as the reference back-propagates
it to the iter arg, the loop's result and the init): an allocation (`tile.create` /
`tile.full`) that starts it is made there, any other init moves there before the loop; a
matmul result carried through a loop (`acc = pl.matmul(..)`, `pl.matmul_acc(..)`) stays in
Acc. An `if` result takes the space its branches yield; branches that disagree meet in Vec,
the other branch moving its value there before its yield (the reference leaves such a phi to
its type checker). Where a consumer needs another space (matmul operands in Left / Right,
vector operands in Vec) a `tile.move` is inserted once, right after the tile is defined (an
iter arg's: at the top of the loop body).

`tile.assemble` writes into its target in place: the result stays in the target's space
(an Acc source drained into a Mat target is the cube's Acc->Mat insert); only a Vec
target asks for a Vec source. A `tile.slice` is a window of its input's buffer, in the
input's space.

A cast or transpose the cube performs itself (`analysis/cube_conversions.py`: the FIXPIPE
downcast of a matmul result, the transposed view of a loaded matmul operand) reads its input
where it is (a transposed load goes to Mat) and puts its result in Mat, so the operand never
takes a round trip through Vec.
"""

from __future__ import annotations

from ..ir.enums import MemorySpace
from ..ir.expr import Call, Expr, IterArg, Var
from ..ir.function import Function, Program
from ..ir.ops import make_call
from ..ir.ops.registry import Op
from ..ir.stmt import Assign, For, If, Stmt, While, Yield, flatten, seq, trailing_yield
from ..ir.types import TileType
from .analysis.cube_conversions import cube_conversions
from .analysis.memory_effects import op_operands
from .analysis.type_propagation import rebuild_call
from .analysis.var_rewrite import VarRewriter
from .analysis.var_uses import calls_in, walk_stmts
from .diagnostics import PassError
from .framework import FunctionPass, register_pass
from .properties import register_property

CUBE_OPERAND_SPACE = {"lhs": MemorySpace.Left, "rhs": MemorySpace.Right, "acc": MemorySpace.Acc,
                      "bias": MemorySpace.Bias}
ANY_SPACE_OPS = {"tile.store", "tile.move", "tile.read", "tile.write", "tile.tpush_to_aiv",
                 "tile.tpush_to_aic", "tile.tfree_to_aic", "tile.tfree_to_aiv", "tile.aiv_shard",
                 "tile.aic_gather", "tile.slice"}
ALLOCATING = ("tile.load", "tile.create", "tile.full")
ASSEMBLE = "tile.assemble"
_PASSES = 8
"""At most this many sweeps settle the spaces (each settles one more level of nesting)."""


def required_space(op: Op, param: str) -> MemorySpace | None:
    """The space operand `param` of `op` must be in (None: any; a `tile.assemble` source's
    space follows its target, see `_Spaces.wanted`)."""
    if op.name in ANY_SPACE_OPS or op.name == ASSEMBLE:
        return None
    if op.facts.unit == "cube":
        return CUBE_OPERAND_SPACE.get(param)
    if op.facts.unit == "vector":
        return MemorySpace.Vec
    return None


def _is_tile(v: Expr) -> bool:
    return isinstance(v, Var) and isinstance(v.type, TileType)


class _Spaces:
    """Pre-scan: the natural space of every tile Var and the spaces its consumers demand."""

    def __init__(self, fn: Function) -> None:
        self.demand: dict[Var, list[MemorySpace]] = {}
        self.on_cube = cube_conversions(fn)
        self.on_cube_calls = {id(s.value): s.value.args[0] for s in walk_stmts(fn.body)
                              if isinstance(s, Assign) and s.var in self.on_cube}
        for source in self.on_cube_calls.values():
            if source.type.memory_space is None:  # a transposed load is staged in Mat
                self.demand.setdefault(source, []).append(MemorySpace.Mat)
        for c in calls_in(fn.body):
            if not isinstance(c.op, Op) or id(c) in self.on_cube_calls:
                continue
            for name, e in op_operands(c):
                space = required_space(c.op, name)
                if space is not None and _is_tile(e) and space not in self.demand.setdefault(e, []):
                    self.demand[e].append(space)
        self.natural: dict[Var, MemorySpace] = {}
        self.carried: dict[Var, list[MemorySpace]] = {}  # a tile init: the spaces its loops carry
        stmts = list(walk_stmts(fn.body))
        for _ in range(_PASSES):  # until settled: a loop's space follows its body's yield, an If
            before = dict(self.natural)  # result its branch's, a body's tiles their iter args'
            carried: dict[Var, list[MemorySpace]] = {}
            for s in stmts:
                if isinstance(s, Assign) and _is_tile(s.var):
                    self.natural[s.var] = self.produced(s.var, s.value)
                elif isinstance(s, (For, While)):
                    yields = _yielded(s.body)
                    for i, (a, rv) in enumerate(zip(s.iter_args, s.return_vars)):
                        if _is_tile(a):
                            y = yields[i] if i < len(yields) else a
                            space = self.of(a.init) if y is a else self.of(y)
                            self.natural[a] = self.natural[rv] = space
                            if isinstance(a.init, Var) and space not in carried.setdefault(a.init, []):
                                carried[a.init].append(space)
                elif isinstance(s, If):
                    branches = [_yielded(s.then_body), _yielded(s.else_body)]
                    for i, rv in enumerate(s.return_vars):
                        if _is_tile(rv):  # branches that disagree meet in Vec
                            spaces = {self.of(b[i]) for b in branches if i < len(b)}
                            self.natural[rv] = spaces.pop() if len(spaces) == 1 else MemorySpace.Vec
            settled = self.natural == before and carried == self.carried
            self.carried = carried
            if settled:
                break
        self.yield_to: dict[int, tuple[Var, ...]] = {}  # a Yield: the vars its values become
        for s in stmts:
            if isinstance(s, (For, While)):
                bodies, targets = (s.body,), s.iter_args
            elif isinstance(s, If):
                bodies, targets = (s.then_body, s.else_body), s.return_vars
            else:
                continue
            for body in bodies:
                if (y := trailing_yield(body)) is not None:
                    self.yield_to[id(y)] = targets
        for c in calls_in(fn.body):
            if isinstance(c.op, Op) and c.op.name == ASSEMBLE and _is_tile(c.args[1]) and \
                    self.wanted(c, "source") not in (None, *self.demand.setdefault(c.args[1], [])):
                self.demand[c.args[1]].append(MemorySpace.Vec)

    def wanted(self, c: Call, param: str) -> MemorySpace | None:
        """The space operand `param` of op call `c` must be in (None: any)."""
        if id(c) in self.on_cube_calls:
            return None
        if c.op.name == ASSEMBLE and param == "source":
            return MemorySpace.Vec if self.of(c.args[0]) is MemorySpace.Vec else None
        return required_space(c.op, param)

    def of(self, e: Expr) -> MemorySpace:
        if isinstance(e, Var) and e in self.natural:
            return self.natural[e]
        t = e.type
        return t.memory_space if isinstance(t, TileType) and t.memory_space else MemorySpace.Vec

    def produced(self, v: Var, value: Expr) -> MemorySpace:
        if v.type.memory_space is not None:
            return v.type.memory_space
        if not isinstance(value, Call) or not isinstance(value.op, Op):
            return self.of(value)
        op = value.op
        explicit = value.kwargs.get("target_memory")
        if isinstance(explicit, MemorySpace):
            return explicit
        if isinstance(value.type, TileType) and value.type.memory_space is not None:
            return value.type.memory_space
        demand = self.demand.get(v, [])
        if v in self.on_cube:
            return MemorySpace.Mat
        if op.name in (ASSEMBLE, "tile.slice"):
            return self.of(value.args[0])
        if op.facts.unit == "cube":
            return MemorySpace.Acc
        if op.name == "tile.aic_gather":  # the cube receives it
            return MemorySpace.Mat
        if op.name == "tile.load":
            staged = (MemorySpace.Left, MemorySpace.Right, MemorySpace.Mat)
            return MemorySpace.Mat if any(d in staged for d in demand) \
                else MemorySpace.Vec
        if op.name in ("tile.create", "tile.full") and v in self.carried:
            return self.carried[v][0]
        return MemorySpace.Vec


def _yielded(body: Stmt | None) -> tuple[Expr, ...]:
    """The values `body` (a loop's or a branch's) ends by yielding."""
    y = trailing_yield(body)
    return () if y is None else y.values


def _move(value: Var, name: str, space: MemorySpace) -> Assign:
    """`name_<space> = tile.move(value, space)`."""
    call = make_call("tile.move", [value], {"target_memory": space}, value.span)
    return Assign(Var(f"{name}_{space.value.lower()}", call.type, value.span), call, value.span)


def _with_space(t: TileType, space: MemorySpace) -> TileType:
    return TileType(t.shape, t.dtype, space, t.valid_shape)


class _Rewrite(VarRewriter):
    def __init__(self, spaces: _Spaces) -> None:
        super().__init__()
        self.spaces = spaces
        self.moved: dict[tuple[Var, MemorySpace], Var] = {}

    def moves_for(self, old: Var, new: Var) -> list[Stmt]:
        """Moves of `new` (the rewritten `old`) into every other space its consumers need."""
        out = []
        natural = self.spaces.natural.get(old, MemorySpace.Vec)
        # an accumulator operand is read where it is; a loop's init goes where the loop carries it
        spaces = [s for s in self.spaces.demand.get(old, []) if s is not MemorySpace.Acc]
        for space in dict.fromkeys([*spaces, *self.spaces.carried.get(old, ())]):
            if space is not natural:
                move = _move(new, old.name, space)
                self.moved[(old, space)] = move.var
                out.append(move)
        return out

    def operand(self, space: MemorySpace | None, e: Expr) -> Expr:
        if space is not None and isinstance(e, Var) and (e, space) in self.moved:
            return self.moved[(e, space)]
        return self.expr(e)

    def call(self, c: Call, var: Var | None) -> Call:
        if not isinstance(c.op, Op):
            return self.expr(c)
        changes = {}
        for name, e in op_operands(c):
            new = self.operand(self.spaces.wanted(c, name), e)
            if new is not e:
                changes[name] = new
        if var is not None and c.op.name in ALLOCATING and _is_tile(var) and "target_memory" not in c.kwargs:
            changes["target_memory"] = self.spaces.natural[var]
        return rebuild_call(c, **changes) if changes else c

    def stmt_SeqStmts(self, s) -> Stmt:
        out: list[Stmt] = []
        for x in s.stmts:
            out.extend(flatten(self.stmt(x)))
        return seq(out, s.span)

    def stmt_Assign(self, s: Assign) -> Stmt:
        value = self.call(s.value, s.var) if isinstance(s.value, Call) else self.expr(s.value)
        if not _is_tile(s.var):
            var = self.bind(s.var)
            return s if var is s.var and value is s.value else Assign(var, value, s.span)
        t = _with_space(value.type if isinstance(value.type, TileType) else s.var.type,
                        self.spaces.natural[s.var])
        var = Var(s.var.name, t, s.var.span)
        self.mapping[s.var] = var
        return seq([Assign(var, value, s.span), *self.moves_for(s.var, var)], s.span)

    def stmt_Yield(self, s: Yield) -> Stmt:
        """The yield, each tile value first moved into the space of the var it becomes (a
        branch that yields another space than its sibling)."""
        targets = self.spaces.yield_to.get(id(s), ())
        values, moves = [], []
        for i, old in enumerate(s.values):
            new = self.expr(old)
            target = targets[i] if i < len(targets) else None
            want = self.spaces.natural.get(target) if _is_tile(target) else None
            if want is not None and _is_tile(old) and self.spaces.of(old) is not want:
                moves.append(_move(new, old.name, want))
                new = moves[-1].var
            values.append(new)
        if not moves:
            return s if all(n is o for n, o in zip(values, s.values)) else s.replace(values=tuple(values))
        return seq([*moves, s.replace(values=tuple(values))], s.span)

    def stmt_Eval(self, s) -> Stmt:
        value = self.call(s.expr, None) if isinstance(s.expr, Call) else self.expr(s.expr)
        return s if value is s.expr else s.replace(expr=value)

    def bind_iter_arg(self, a: IterArg) -> IterArg:
        if not _is_tile(a):
            return super().bind_iter_arg(a)
        space = self.spaces.natural[a]
        new = IterArg(a.name, _with_space(a.type, space), self.operand(space, a.init), a.span)
        self.mapping[a] = new
        return new

    def bind(self, v: Var) -> Var:
        if _is_tile(v) and v in self.spaces.natural and not self.fresh:
            new = Var(v.name, _with_space(v.type, self.spaces.natural[v]), v.span)
            self.mapping[v] = new
            return new
        return super().bind(v)

    def stmt_For(self, s: For) -> Stmt:
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        iter_args = tuple(self.bind_iter_arg(a) for a in s.iter_args)
        moves = [m for a, na in zip(s.iter_args, iter_args) if _is_tile(a) for m in self.moves_for(a, na)]
        loop_var = self.bind(s.loop_var)
        body = self.stmt(s.body)
        if moves:
            body = seq([*moves, *flatten(body)], s.body.span)
        rvs = tuple(self.bind(v) for v in s.return_vars)
        new = s.replace(loop_var=loop_var, start=start, stop=stop, step=step, iter_args=iter_args,
                        body=body, return_vars=rvs)
        after = [m for v, nv in zip(s.return_vars, rvs) if _is_tile(v) for m in self.moves_for(v, nv)]
        return seq([new, *after], s.span) if after else new

    def stmt_If(self, s: If) -> Stmt:
        new = super().stmt_If(s)
        after = [m for v, nv in zip(s.return_vars, new.return_vars) if _is_tile(v)
                 for m in self.moves_for(v, nv)]
        return seq([new, *after], s.span) if after else new


@register_pass
class InferTileMemorySpace(FunctionPass):
    name = "InferTileMemorySpace"
    required = frozenset({"IncoreTileOps"})
    produced = frozenset({"TileMemoryInferred"})

    def run_on_function(self, fn: Function, program: Program) -> Function:
        if not fn.func_type.is_core:
            return fn
        spaces = _Spaces(fn)
        if not spaces.natural:
            return fn
        return fn.replace(body=_Rewrite(spaces).stmt(fn.body))


def check_tile_memory(program: Program) -> None:
    for fn in program.functions.values():
        if not fn.func_type.is_core:
            continue
        for s in walk_stmts(fn.body):
            if isinstance(s, Assign) and _is_tile(s.var) and s.var.type.memory_space is None:
                raise PassError(f"tile {s.var.name!r} in {fn.name!r} has no memory space", s.span)


register_property("TileMemoryInferred", check_tile_memory, "every tile in a core function has a memory space")
