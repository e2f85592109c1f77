"""Statements: assignments, returns, expression statements, `if`, inline expansion."""

from __future__ import annotations

import ast
from typing import Any

from ...errors import (
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UnsupportedConstructError,
)
from ...ir.enums import FunctionType
from ...ir.expr import ConstFloat, ConstInt, Expr, IterArg, MakeTuple, TupleGetItem, Var
from ...ir.stmt import Assign, Eval, If, Return, Stmt, Yield, flatten, seq
from ...ir.types import ScalarType, TensorType, TileType, TupleType, Type, describe_type
from .. import constructs, ops
from ..dispatch import literal, slice_bounds, unified_call
from ..values import DSLValue, DynVar, TupleValue, annotation_spec, wrap
from .directives import DirectiveParser
from .types import merge_annotation, same_type

_UNSUPPORTED_STMTS = {
    "While": (
        "Python `while` loops are not supported",
        "write `for (x,) in pl.while_(init_values=(x0,)):` with pl.cond(...) first",
    ),
    "Try": ("try/except is not supported in a DSL function", ""),
    "Raise": ("raise is not supported in a DSL function", "use pl.static_assert for parse-time checks"),
    "Delete": ("del is not supported in a DSL function", ""),
    "Global": ("global is not supported in a DSL function", ""),
    "Nonlocal": ("nonlocal is not supported in a DSL function", ""),
    "Import": ("imports inside a DSL function are not supported", "import at module level"),
    "ImportFrom": ("imports inside a DSL function are not supported", "import at module level"),
    "FunctionDef": ("nested functions are not supported", "define a @pl.inline helper at module level"),
    "ClassDef": ("nested classes are not supported", ""),
    "Assert": ("assert is not supported in a DSL function", 'use pl.static_assert(cond, "msg")'),
    "Match": ("match is not supported in a DSL function", "use if/elif/else"),
    "AsyncFor": ("async for is not supported", ""),
    "AsyncWith": ("async with is not supported", ""),
    "AsyncFunctionDef": ("async functions are not supported", ""),
}


class YieldSlot:
    """Collects the `pl.yield_` of a loop / branch body: values and target names."""

    __slots__ = ("values", "targets", "node")

    def __init__(self) -> None:
        self.values: list[Expr] | None = None
        self.targets: list[tuple[str, Type | None, ast.AST]] = []
        self.node: ast.AST | None = None


class StatementParser(DirectiveParser):
    blocks: list[list[Stmt]]
    yield_slots: list[YieldSlot | None]
    block_kinds: list[str]
    strict_ssa: bool
    func_type: FunctionType
    loop_depth: int
    prologue_open: bool
    func_attrs: dict[str, Any]
    declared_returns: list[Type] | None
    seen_returns: list[Type] | None
    block_locals: set[int]
    inline_stack: list[str]

    # --- blocks ---------------------------------------------------------------------------
    def emit(self, stmt: Stmt) -> None:
        self.blocks[-1].append(stmt)

    def parse_block(
        self, body: list[ast.stmt], kind: str, slot: YieldSlot | None = None, new_frame: bool = True
    ) -> Stmt:
        self.blocks.append([])
        self.block_kinds.append(kind)
        self.yield_slots.append(slot)
        if new_frame:
            self.env.append({})
        try:
            for i, s in enumerate(body):
                self.parse_stmt(s)
                if slot is not None and slot.node is s and i != len(body) - 1:
                    raise self.error(
                        ParserSyntaxError, "pl.yield_ must be the last statement of its block", body[i + 1]
                    )
        finally:
            if new_frame:
                frame = self.env.pop()
                self.env[-1].update({k: v for k, v in frame.items() if id(v) not in self.block_locals})
            self.yield_slots.pop()
            self.block_kinds.pop()
            stmts = self.blocks.pop()
        return seq(stmts, self.src.span(body[0]) if body else None)

    def parse_stmt(self, node: ast.stmt) -> None:
        name = type(node).__name__
        if name in _UNSUPPORTED_STMTS:
            msg, hint = _UNSUPPORTED_STMTS[name]
            raise self.error(UnsupportedConstructError, msg, node, hint=hint)
        method = getattr(self, "stmt_" + name, None)
        if method is None:
            raise self.error(UnsupportedConstructError, f"`{name}` statements are not supported", node)
        is_func_attr = self._is_construct_call(node, "func_attr")
        if not is_func_attr and not _is_docstring(node):
            self.prologue_open = False
        try:
            method(node)
        except ParserError as e:
            raise self.locate(e, node) from None

    def _is_construct_call(self, node: ast.stmt, kind: str) -> bool:
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return False
        try:
            fn = self.eval(node.value.func)
        except ParserError:
            return False
        return constructs.is_construct(fn, kind)

    # --- binding --------------------------------------------------------------------------
    def bind_var(self, name: str, type_: Type, node: ast.AST) -> Var:
        """A Var for assigning `name`: the existing one when rebinding with the same type
        (non-SSA), else a new one. Strict SSA rejects any second assignment."""
        existing = self.local_var(name)
        if existing is not None and self.strict_ssa and name != "_":
            first = existing.span.begin_line
            raise self.error(
                SSAViolationError,
                f"variable {name!r} is assigned twice in a strict_ssa "
                f"function (first assigned at line {first})",
                node,
                hint="use a new name, or drop strict_ssa=True",
            )
        if (
            existing is not None
            and not isinstance(existing, IterArg)
            and id(existing) not in self.block_locals
            and same_type(existing.type, type_)
        ):
            return existing
        var = Var(name, type_, self.src.span(node))
        self.env[-1][name] = var
        return var

    def bind_local(self, name: str, type_: Type, node: ast.AST, var: Var | None = None) -> Var:
        """A loop variable / iter arg: visible in its body only."""
        var = var or Var(name, type_, self.src.span(node))
        self.block_locals.add(id(var))
        self.env[-1][name] = var
        return var

    def assign(self, name: str, value: Any, ann: Type | None, node: ast.AST, value_node: ast.AST) -> None:
        if isinstance(value, DynVar) or (ann is None and not isinstance(value, (DSLValue, bool, int, float))):
            if isinstance(value, tuple) and any(isinstance(v, DSLValue) for v in value):
                value = wrap(
                    MakeTuple([self.as_expr(v, value_node) for v in value], self.src.span(value_node))
                )
            else:
                self.env[-1][name] = value  # a compile-time Python value
                return
        expr = self.value_expr(value, ann, value_node)
        vtype = expr.type
        if ann is not None:
            merged = merge_annotation(ann, vtype)
            if merged is None:
                raise self.error(
                    ParserTypeError,
                    f"{name!r} is annotated {describe_type(ann)} but the value "
                    f"has type {describe_type(vtype)}",
                    value_node,
                )
            vtype = merged
        var = self.bind_var(name, vtype, node)
        self.emit(Assign(var, expr, self.src.span(node)))

    def value_expr(self, value: Any, ann: Type | None, node: ast.AST) -> Expr:
        if isinstance(value, tuple) and isinstance(ann, TupleType):
            return MakeTuple(
                [self.value_expr(v, t, node) for v, t in zip(value, ann.types)], self.src.span(node)
            )
        if isinstance(value, DSLValue):
            e = value.unwrap()
            if (
                isinstance(ann, ScalarType)
                and isinstance(e, (ConstInt, ConstFloat))
                and e.type.dtype is not ann.dtype
                and (ann.dtype.is_int or ann.dtype.is_float)
            ):
                return _retype_literal(e.value, ann, e.span)
            return e
        if isinstance(ann, ScalarType) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return _retype_literal(value, ann, self.src.span(node))
        e = literal(value, None)
        if e is None:
            raise self.error(
                ParserTypeError, f"cannot assign {type(value).__name__} {value!r} to a DSL variable", node
            )
        return e

    def bind_target(
        self, target: ast.expr, value: Any, ann: Type | None, node: ast.AST, value_node: ast.AST
    ) -> None:
        if isinstance(target, ast.Name):
            self.assign(target.id, value, ann, target, value_node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value, node, value_node)
        elif isinstance(target, ast.Subscript):
            self.subscript_write(target, value, node)
        else:
            raise self.error(UnsupportedConstructError, f"cannot assign to {ast.unparse(target)}", target)

    def unpack(self, target: ast.Tuple | ast.List, value: Any, node: ast.AST, value_node: ast.AST) -> None:
        elts = target.elts
        if isinstance(value, (tuple, list)):
            items = list(value)
        elif isinstance(value, TupleValue):
            expr = value.unwrap()
            if not isinstance(expr, Var):
                tmp = self.bind_var("_".join(_target_names(target)), expr.type, target)
                self.emit(Assign(tmp, expr, self.src.span(node)))
                expr = tmp
            items = [
                wrap(TupleGetItem(expr, i, self.src.span(value_node))) for i in range(len(expr.type.types))
            ]
        else:
            raise self.error(
                ParserTypeError, f"cannot unpack {_kind(value)} into {len(elts)} names", value_node
            )
        if len(items) != len(elts):
            raise self.error(
                ParserTypeError, f"cannot unpack {len(items)} values into {len(elts)} names", target
            )
        for t, v in zip(elts, items):
            self.bind_target(t, v, None, node, value_node)

    def subscript_write(self, target: ast.Subscript, value: Any, node: ast.AST) -> None:
        """`out[a:b, c:d] = t` writes a region and rebinds `out`; `out[i, j] = s` writes one element."""
        if not isinstance(target.value, ast.Name):
            raise self.error(
                UnsupportedConstructError, "only a named tensor/tile can be written by subscript", target
            )
        base = self.eval(target.value)
        key = self.eval_index(target.slice)
        keys = key if isinstance(key, tuple) else (key,)
        self.span = self.src.span(node)
        if not isinstance(base, DSLValue):
            raise self.error(ParserTypeError, f"cannot write into {_kind(base)} by subscript", target.value)
        btype = base.type
        if not isinstance(btype, (TensorType, TileType)):
            if type(base).__name__ == "Array":
                new = ops.array.update_element(base, keys[0], value)
                self.assign(target.value.id, new, None, target.value, node)
                return
            raise self.error(ParserTypeError, f"cannot write into {_kind(base)} by subscript", target.value)
        if not any(isinstance(k, slice) for k in keys):
            self.emit(
                Eval(unified_call("write", (base, list(keys), value), {}).unwrap(), self.src.span(node))
            )
            return
        offsets, _ = slice_bounds(base, keys)
        if isinstance(btype, TensorType) and isinstance(getattr(value, "type", None), TileType):
            new = unified_call("store", (value, offsets, base), {})
        else:
            new = unified_call("assemble", (base, value, offsets), {})
        self.assign(target.value.id, new, None, target.value, node)

    # --- statements -----------------------------------------------------------------------
    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.error(
                UnsupportedConstructError, "chained assignment `a = b = x` is not supported", node
            )
        self.assign_statement(node.targets[0], node.value, None, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            raise self.error(ParserSyntaxError, "an annotated name needs a value", node)
        ann = self.annotation(node.annotation)
        self.assign_statement(node.target, node.value, ann, node)

    def annotation(self, node: ast.expr) -> Type:
        spec = self.eval_static(node)
        try:
            return annotation_spec(spec).type
        except ParserError as e:
            raise self.locate(e, node) from None

    def assign_statement(
        self, target: ast.expr, value_node: ast.expr, ann: Type | None, node: ast.stmt
    ) -> None:
        if isinstance(value_node, ast.Call) and constructs.is_construct(self.eval(value_node.func), "yield"):
            self.yield_statement(value_node, target, ann, node)
            return
        value = self.eval(value_node)
        self.bind_target(target, value, ann, node, value_node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        from ..dispatch import binary_operator
        from .expressions import _BINOPS

        if not isinstance(node.target, ast.Name):
            raise self.error(
                UnsupportedConstructError, "augmented assignment to a subscript is not supported", node.target
            )
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error(
                UnsupportedConstructError, f"operator {type(node.op).__name__} is not supported", node
            )
        current = self.eval(
            ast.Name(
                node.target.id,
                ast.Load(),
                lineno=node.lineno,
                col_offset=node.col_offset,
                end_lineno=node.end_lineno,
                end_col_offset=node.end_col_offset,
            )
        )
        rhs = self.eval(node.value)
        self.span = self.src.span(node)
        try:
            value = binary_operator(op, current, rhs)
        except ParserError as e:
            raise self.locate(e, node) from None
        self.assign(node.target.id, value, None, node.target, node)

    def stmt_Expr(self, node: ast.Expr) -> None:
        v = node.value
        if isinstance(v, ast.Constant):
            return  # docstrings and `...`
        if isinstance(v, ast.Call):
            fn = self.eval(v.func)
            kind = getattr(fn, "pl_construct", None)
            handler = getattr(self, f"construct_{kind}", None) if kind else None
            if handler is not None:
                handler(v, node)
                return
        value = self.eval(v)
        if isinstance(value, DSLValue):
            self.emit(Eval(value.unwrap(), self.src.span(node)))

    def construct_yield(self, call: ast.Call, node: ast.stmt) -> None:
        """A bare `pl.yield_(..)`: values flow to no named return vars."""
        self.yield_statement(call, None, None, node)

    def yield_statement(
        self, call: ast.Call, target: ast.expr | None, ann: Type | None, node: ast.stmt
    ) -> None:
        slot = self.yield_slots[-1] if self.yield_slots else None
        if slot is None:
            raise self.error(
                ParserSyntaxError,
                "pl.yield_ is only valid as the last statement of a loop with "
                "init_values, a pl.while_ body or an if/else branch",
                node,
            )
        if call.keywords:
            raise self.error(ParserSyntaxError, "pl.yield_ takes positional values only", call)
        values = [self.as_expr(self.eval(a), a) for a in call.args]
        names: list[tuple[str, Type | None, ast.AST]] = []
        if target is not None:
            elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for t in elts:
                if not isinstance(t, ast.Name):
                    raise self.error(ParserSyntaxError, "pl.yield_ targets must be plain names", t)
                names.append((t.id, ann if len(elts) == 1 else None, t))
            if len(names) != len(values):
                raise self.error(
                    ParserSyntaxError, f"pl.yield_ yields {len(values)} values into {len(names)} names", node
                )
        slot.values, slot.targets, slot.node = values, names, node
        self.emit(Yield(values, self.src.span(node)))

    def stmt_Return(self, node: ast.Return) -> None:
        v = node.value
        raw = (
            []
            if v is None
            else [self.eval(e) for e in v.elts]
            if isinstance(v, ast.Tuple)
            else [self.eval(v)]
        )
        declared = self.declared_returns
        if declared is not None and len(raw) != len(declared):
            raise self.error(
                ParserTypeError,
                f"return gives {len(raw)} values but the function declares {len(declared)} return types",
                node,
            )
        values = []
        for i, r in enumerate(raw):
            hint = declared[i] if declared is not None else None
            values.append(self.value_expr(r, hint if isinstance(hint, ScalarType) else None, node))
        if declared is not None:
            for i, (e, t) in enumerate(zip(values, declared)):
                if merge_annotation(t, e.type) is None:
                    raise self.error(
                        ParserTypeError,
                        f"return value {i} has type {describe_type(e.type)} but "
                        f"the function declares {describe_type(t)}",
                        node,
                    )
        elif self.seen_returns is None:
            self.seen_returns = [e.type for e in values]
        self.emit(Return(values, self.src.span(node)))

    def stmt_Pass(self, node: ast.Pass) -> None:
        """`pass` emits nothing."""

    def stmt_Break(self, node: ast.Break) -> None:
        from ...ir.stmt import Break

        if self.loop_depth == 0:
            raise self.error(ParserSyntaxError, "break outside a loop", node)
        self.emit(Break(self.src.span(node)))

    def stmt_Continue(self, node: ast.Continue) -> None:
        from ...ir.stmt import Continue

        if self.loop_depth == 0:
            raise self.error(ParserSyntaxError, "continue outside a loop", node)
        self.emit(Continue(self.src.span(node)))

    def stmt_If(self, node: ast.If) -> None:
        cond = self.eval(node.test)
        if not isinstance(cond, DSLValue):
            for s in node.body if cond else node.orelse:  # compile-time condition: keep one branch
                self.parse_stmt(s)
            return
        c = cond.unwrap()
        if not isinstance(c.type, ScalarType):
            raise self.error(
                ParserTypeError, f"an if condition must be a scalar, got {describe_type(c.type)}", node.test
            )
        then_slot, else_slot = YieldSlot(), YieldSlot()
        then_body = self.parse_block(node.body, "if", then_slot)
        else_body = self.parse_block(node.orelse, "if", else_slot) if node.orelse else None
        if then_slot.targets and else_slot.node is None and _is_elif(node):
            inner = flatten(else_body)[-1]  # an `elif` that yields: its values flow out of this if too
            if isinstance(inner, If) and inner.return_vars:
                else_slot.values, else_slot.node = list(inner.return_vars), node.orelse[0]
                else_body = seq([*flatten(else_body), Yield(inner.return_vars, inner.span)])
        return_vars: list[Var] = []
        if then_slot.targets or else_slot.targets:
            if then_slot.node is None or else_slot.node is None:
                where = node if then_slot.node is None else then_slot.node
                raise self.error(
                    ParserSyntaxError,
                    "an if that yields values needs pl.yield_ at the end of both branches",
                    where,
                )
            if len(then_slot.values) != len(else_slot.values):
                raise self.error(
                    ParserSyntaxError,
                    f"the branches yield {len(then_slot.values)} and {len(else_slot.values)} values",
                    else_slot.node,
                )
            for (name, ann, tnode), tv, ev in zip(then_slot.targets, then_slot.values, else_slot.values):
                if merge_annotation(tv.type, ev.type) is None:
                    raise self.error(
                        ParserTypeError,
                        f"branches yield {describe_type(tv.type)} and {describe_type(ev.type)} for {name!r}",
                        else_slot.node,
                    )
                return_vars.append(Var(name, ann or tv.type, self.src.span(tnode)))
        self.emit(If(c, then_body, else_body, return_vars, self.src.span(node)))
        for (name, _, tnode), rv in zip(then_slot.targets, return_vars):
            self.declare(name, rv, tnode)

    def declare(self, name: str, var: Var, node: ast.AST) -> None:
        """Bind a return var / task var produced by a compound statement."""
        if self.strict_ssa and self.local_var(name) is not None:
            raise self.error(
                SSAViolationError, f"variable {name!r} is assigned twice in a strict_ssa function", node
            )
        self.env[-1][name] = var


def _retype_literal(value: Any, t: ScalarType, span: Any) -> Expr:
    if t.dtype.is_float:
        return ConstFloat(float(value), t.dtype, span)
    if isinstance(value, float):
        raise ParserTypeError(f"cannot store float {value!r} in a {t.dtype.name} scalar")
    return ConstInt(value, t.dtype, span)


def _is_elif(node: ast.If) -> bool:
    return len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _target_names(t: ast.expr) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    return ["tmp"]


def _kind(v: Any) -> str:
    if isinstance(v, DSLValue):
        return describe_type(v.type)
    return f"{type(v).__name__} {v!r}"
