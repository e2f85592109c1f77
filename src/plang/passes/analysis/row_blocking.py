"""Row blocking: a straight-line, tensor-level kernel whose tiles would not fit on chip
becomes a loop over blocks of rows (ConvertTensorToTileOps runs it before converting).

The body may compute with row-wise ops only: elementwise ops, row reductions, row / column
broadcasts, matmul (its left operand blocked by rows, its right operand whole). Every
tensor whose leading dim is the row count `M` of the oversized value is *row-varying*:
inside the loop it is a block of `R` rows (`R` the largest divisor of `M` whose blocks fit
their buffers); parameters are sliced, `pl.assemble` targets and returned values are
carried through the loop and written one block at a time. Everything else is invariant
and stays before the loop. `block_rows` returns None when the body does not have this
form (the caller then reports the oversized tile).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...dtypes import INDEX
from ...ir.enums import MemorySpace, ParamDirection
from ...ir.expr import Add, Call, ConstInt, Expr, IterArg, MakeTuple, Mul, Var
from ...ir.function import Function
from ...ir.ops import make_call
from ...ir.ops.registry import Op, OpTypeError, OpValueError, Pattern, Unit, ops_where
from ...ir.stmt import Assign, For, Return, Stmt, Yield, flatten, seq
from ...ir.types import ScalarType, TensorType, dim_value
from ...target import Device
from .var_uses import expr_vars

#: tensor ops computed row by row: an operand with the row count is blocked, one with a
#: single row (a column broadcast) is used whole
ROW_WISE = ops_where(lambda op: op.facts.pattern in (Pattern.ELEMENTWISE, Pattern.ROW_REDUCTION,
                                                     Pattern.ROW_BROADCAST, Pattern.COL_BROADCAST), "tensor")
GENERATORS = ops_where(lambda op: op.facts.unit is Unit.ALLOC, "tensor")
MATMUL = ops_where(lambda op: op.facts.pattern is Pattern.MATMUL, "tensor")


def _operands(call: Call) -> dict[str, object]:
    """Every operand and attribute of an op call by parameter name."""
    required = [p.name for p in call.op.params if p.is_expr and p.required]
    return {**dict(zip(required, call.args)), **call.kwargs}


def _dims(e: Expr) -> list[Expr]:
    return list(e.elements) if isinstance(e, MakeTuple) else list(e)


@dataclass
class _Plan:
    rows: int  # M
    row_bytes: dict[tuple[Var, MemorySpace], int] = field(default_factory=dict)  # blocked value, its buffer
    # operands used whole -> the buffers their copies take
    whole: dict[Var, tuple[MemorySpace, ...]] = field(default_factory=dict)
    varying: set[Var] = field(default_factory=set)  # row-varying values (params included)
    chains: dict[Var, Var] = field(default_factory=dict)  # last assemble of a chain -> its root target
    links: set[Var] = field(default_factory=set)  # every assemble result

    def blocked(self, v: Var) -> bool:
        return v in self.varying or v in self.links


class _Blocker:
    def __init__(self, fn: Function, device: Device, rows: int) -> None:
        self.fn, self.device = fn, device
        self.plan = _Plan(rows)
        self.params = set(fn.params)
        self.read_only = {p for p, d in zip(fn.params, fn.param_directions) if d is ParamDirection.In}

    # ------------------------------------------------------------ classification
    def is_rows(self, e: Expr) -> bool:
        t = e.type
        return isinstance(t, TensorType) and t.rank >= 1 and dim_value(t.shape[0]) == self.plan.rows

    def note(self, v: Var, space: MemorySpace) -> bool:
        """Record blocked value `v` living in `space`; False when its row size is not static."""
        t = v.type
        inner = [dim_value(d) for d in t.shape[1:]]
        if any(d is None for d in inner):
            return False
        self.plan.row_bytes[(v, space)] = (t.dtype.bits * _product(inner) + 7) // 8
        return True

    def operand_ok(self, e: object, space: MemorySpace) -> bool:
        """A row-wise op's tensor operand: blocked when it has the row count (a parameter or a
        row-varying value), used whole when it is invariant with a single row."""
        if not isinstance(e, Var) or not isinstance(e.type, TensorType):
            return not any(self.plan.blocked(v) for v in _vars_of(e))
        if e in self.plan.links:
            return False
        if self.is_rows(e) and (e in self.params or e in self.plan.varying):
            self.plan.varying.add(e)
            return self.note(e, space)
        if e in self.plan.varying or dim_value(e.type.shape[0]) != 1:
            return False
        self.plan.whole.setdefault(e, (space,))
        return True

    def classify(self, s: Assign) -> bool | None:
        """True: row-varying; False: invariant; None: not blockable."""
        value = s.value
        used = expr_vars(value)
        touches = any(self.plan.blocked(v) for v in used)
        if not isinstance(value, Call) or not isinstance(value.op, Op):
            return None if touches else False
        name, ops = value.op.name, _operands(value)
        if name == "tensor.assemble":
            return self.classify_assemble(s, ops)
        if not self.is_rows(s.var):
            return None if touches else (False if value.op.facts.pure else None)
        if name in ROW_WISE:
            ok = all(self.operand_ok(ops[p.name], MemorySpace.Vec) for p in value.op.params
                     if p.kind in ("tensor", "shaped") and p.name in ops)
        elif name in MATMUL:
            ok = not ops.get("a_trans") and self.operand_ok(ops["lhs"], MemorySpace.Left) \
                and "rhs" in ops and self.whole_operand(ops["rhs"], *self.rhs_buffers(ops)) \
                and ("acc" not in ops or self.operand_ok(ops["acc"], MemorySpace.Acc))
            if ok:
                self.plan.varying.add(s.var)
                return self.note(s.var, MemorySpace.Acc) or None
        elif name in GENERATORS:
            ok = not touches
        elif name == "tensor.slice":
            src = ops["input"]
            ok = src in self.params and "valid_shape" not in ops and not ops.get("drop_dims")
        else:
            ok = False
        if not ok:
            return None
        self.plan.varying.add(s.var)
        return self.note(s.var, MemorySpace.Vec) or None

    def rhs_buffers(self, ops: dict) -> tuple[MemorySpace, ...]:
        """The buffers a whole matmul rhs takes while the row blocks are live: Right; a
        `b_trans` rhs computed in the body also keeps its tile and, as ConvertTensorToTileOps
        transposes it inside the loop, the transpose in Vec (a read-only parameter is loaded
        and transposed once before the loop)."""
        if ops.get("b_trans") and ops["rhs"] not in self.read_only:
            return MemorySpace.Vec, MemorySpace.Vec, MemorySpace.Right
        return (MemorySpace.Right,)

    def whole_operand(self, e: Expr, *spaces: MemorySpace) -> bool:
        if not isinstance(e, Var) or self.plan.blocked(e):
            return False
        self.plan.whole[e] = spaces
        return True

    def classify_assemble(self, s: Assign, ops: dict) -> bool | None:
        target, source = ops["target"], ops["source"]
        if source not in self.plan.varying or ops.get("atomic"):
            return None
        if target in self.plan.chains:
            root = self.plan.chains.pop(target)  # a chain link is only extended, never read
        elif target in self.params:
            root = target
        else:
            return None
        self.plan.chains[s.var] = root
        self.plan.links.add(s.var)
        return True

    # ------------------------------------------------------------ block size
    def block_rows(self) -> int | None:
        """The largest divisor of M for which every buffer holds all its blocks at once next to
        the operands used whole; None when not even one row fits."""
        free = {space: self.device.capacity(space) for _, space in self.plan.row_bytes}
        per_row = dict.fromkeys(free, 0)
        for (_, space), nbytes in self.plan.row_bytes.items():
            per_row[space] += nbytes
        for v, spaces in self.plan.whole.items():
            if v.type.nbytes is None:
                return None
            for space in spaces:
                free[space] = free.get(space, self.device.capacity(space)) - v.type.nbytes
        if any(f < 0 for f in free.values()):
            return None
        limit = min(free[space] // per_row[space] for space in per_row)
        m = self.plan.rows
        return next((r for r in range(min(limit, m - 1), 0, -1) if m % r == 0), None)


def _product(dims: list[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _vars_of(e: object) -> list[Var]:
    if isinstance(e, Expr):
        return expr_vars(e)
    if isinstance(e, (tuple, list)):
        return [v for x in e for v in _vars_of(x)]
    return []


def block_rows(fn: Function, device: Device, rows: int) -> Function | None:
    """`fn` with its body as a loop over blocks of `rows`-row tensors (see the module doc),
    or None when the body is not straight-line row-wise tensor code or no block fits."""
    stmts = flatten(fn.body)
    if not stmts or not isinstance(stmts[-1], Return) or not all(isinstance(s, Assign) for s in stmts[:-1]):
        return None
    blocker = _Blocker(fn, device, rows)
    kinds: list[bool] = []
    for s in stmts[:-1]:
        kind = blocker.classify(s)
        if kind is None:
            return None
        kinds.append(kind)
    ret: Return = stmts[-1]
    plan = blocker.plan
    roots = set(plan.chains.values())
    if roots & (plan.varying | set(plan.whole) | set(ret.values)):
        return None  # an assemble target also read, or returned as it was before the loop
    if any(v in plan.links and v not in plan.chains for v in ret.values):
        return None  # a value in the middle of an assemble chain escapes the loop
    size = blocker.block_rows() if plan.row_bytes else None
    if size is None:
        return None
    return _Emitter(fn, plan, size).emit(stmts[:-1], kinds, ret)


class _Emitter:
    """Builds the blocked function once the plan and block size are known."""

    def __init__(self, fn: Function, plan: _Plan, size: int) -> None:
        self.fn, self.plan, self.size = fn, plan, size
        span = fn.body.span
        self.block = Var("rb", ScalarType(INDEX), span)
        self.row = Var("row", ScalarType(INDEX), span)
        self.mapping: dict[Var, Expr] = {}
        self.body: list[Stmt] = [Assign(self.row, Mul(self.block, ConstInt(size)), span)]

    def blocked(self, e: Var, span) -> Expr:
        """The block of row-varying `e` in this iteration (a parameter is sliced on first use)."""
        if e not in self.mapping and e in self.fn.params:
            shape = [ConstInt(self.size), *e.type.shape[1:]]
            offset = [self.row, *[ConstInt(0)] * (e.type.rank - 1)]
            part = Var(f"{e.name}_rows", make_call("tensor.slice", [e, shape, offset]).type, span)
            self.body.append(Assign(part, make_call("tensor.slice", [e, shape, offset], span=span), span))
            self.mapping[e] = part
        return self.mapping.get(e, e)

    def shifted(self, offset: Expr) -> list[Expr]:
        dims = _dims(offset)
        return [self.row if dim_value(dims[0]) == 0 else Add(dims[0], self.row), *dims[1:]]

    def rewrite(self, s: Assign, carried: dict[Var, IterArg]) -> Assign:
        call: Call = s.value
        ops = _operands(call)
        for name, v in list(ops.items()):
            if isinstance(v, Var) and v in self.plan.varying:
                ops[name] = self.blocked(v, s.span)
        name = call.op.name
        if name in GENERATORS or name == "tensor.slice":
            ops["shape"] = [ConstInt(self.size), *_dims(ops["shape"])[1:]]
        if name == "tensor.slice":
            ops["offset"] = self.shifted(ops["offset"])
        if name == "tensor.assemble":
            target = ops["target"]
            ops["target"] = carried[target] if target in carried else self.mapping[target]
            ops["offset"] = self.shifted(ops["offset"])
        try:
            new = make_call(call.op, (), ops, call.span)
        except (OpTypeError, OpValueError) as e:  # pragma: no cover - types follow by construction
            raise AssertionError(f"row blocking built an ill-typed {name}: {e}") from None
        var = Var(s.var.name, new.type, s.var.span)
        self.mapping[s.var] = var
        return Assign(var, new, s.span)

    def emit(self, stmts: list[Assign], kinds: list[bool], ret: Return) -> Function:
        span = self.fn.body.span
        fn, plan = self.fn, self.plan
        before = [s for s, k in zip(stmts, kinds) if not k]
        roots = list(dict.fromkeys(plan.chains.values()))
        carried = {r: IterArg(r.name, r.type, r, r.span) for r in roots}
        new_params: list[Var] = []
        outputs: dict[Var, Var] = {}  # returned row-varying value -> its new Out parameter
        for i, v in enumerate(ret.values):
            if v in plan.varying and v not in outputs:
                out = Var(f"ret{i}", v.type, ret.span)
                new_params.append(out)
                outputs[v] = out
                carried[out] = IterArg(out.name, out.type, out, ret.span)
        for s, k in zip(stmts, kinds):
            if k:
                self.body.append(self.rewrite(s, carried))
        finals: dict[Var, Expr] = {}  # root target / Out param -> its value after this block
        for last, root in plan.chains.items():
            finals[root] = self.mapping[last]
        for v, out in outputs.items():
            stored = Var(f"{out.name}_rows", out.type, ret.span)
            offset = [self.row, *[ConstInt(0)] * (v.type.rank - 1)]
            value = make_call("tensor.assemble", [carried[out], self.blocked(v, ret.span), offset],
                              span=ret.span)
            self.body.append(Assign(stored, value, ret.span))
            finals[out] = stored
        order = list(carried)
        self.body.append(Yield([finals[r] for r in order], ret.span))
        results = {r: Var(r.name, r.type, ret.span) for r in order}
        loop = For(self.block, ConstInt(0), ConstInt(plan.rows // self.size), ConstInt(1),
                   seq(self.body, span), [carried[r] for r in order], [results[r] for r in order],
                   span=span)
        after = {last: results[root] for last, root in plan.chains.items()}
        after.update({v: results[out] for v, out in outputs.items()})
        new_ret = Return([after.get(v, v) for v in ret.values], ret.span)
        return fn.replace(params=fn.params + tuple(new_params),
                          param_directions=fn.param_directions + (ParamDirection.Out,) * len(new_params),
                          body=seq([*before, loop, new_ret], span))
