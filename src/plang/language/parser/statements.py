"""Statements: assignments, returns, expression statements and `if`; loops, `with` scopes and
directives go to the `LoopParser`, `ScopeParser` and `Directives` this parser owns."""

from __future__ import annotations

import ast
from typing import Any

from ...dtypes import INDEX
from ...errors import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedConstructError,
)
from ...ir.expr import Call, Cast, ConstFloat, ConstInt, Expr, MakeTuple, TupleGetItem, Var
from ...ir.stmt import Assign, Break, Continue, Eval, If, Return, Stmt, Yield, flatten, seq
from ...ir.types import (
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Type,
    UnknownType,
    describe_type,
    describe_value,
)
from .. import constructs, ops
from ..dispatch import binary_operator, literal, slice_bounds, unified_call
from ..values import DSLValue, DynVar, TupleValue, int_literal, wrap
from .body import Body, YieldSlot
from .directives import Directives
from .expressions import BINOPS, ExprEvaluator
from .loops import LoopParser
from .returns import close_returns
from .scopes import OUTLINED_SCOPES, ScopeParser
from .types import TypeResolver, merge_annotation

_UNSUPPORTED_STMTS = {
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


class StatementParser:
    """Parses statements into the innermost open block of `body`."""

    def __init__(self, exprs: ExprEvaluator, types: TypeResolver, body: Body) -> None:
        self.exprs, self.types, self.body = exprs, types, body
        self.source, self.names, self.state = exprs.source, exprs.names, exprs.state
        self.directives = Directives(self)
        self.loops = LoopParser(self)
        self.scopes = ScopeParser(self, self.loops)
        exprs.calls.expand_inline = self.directives.expand_inline  # inline helpers splice statements
        self.handlers = {
            "Assign": self.stmt_Assign,
            "AnnAssign": self.stmt_AnnAssign,
            "AugAssign": self.stmt_AugAssign,
            "Expr": self.stmt_Expr,
            "Return": self.stmt_Return,
            "Pass": self.stmt_Pass,
            "Break": self.stmt_Break,
            "Continue": self.stmt_Continue,
            "If": self.stmt_If,
            "For": self.loops.stmt_For,
            "While": self.loops.stmt_While,
            "With": self.scopes.stmt_With,
        }
        d = self.directives
        self.constructs = {
            "yield": self.construct_yield,
            "cond": d.construct_cond,
            "func_attr": d.construct_func_attr,
            "static_assert": d.construct_static_assert,
            "static_print": d.construct_static_print,
            "dump_tag": d.construct_dump_tag,
            "set_cache_policy": d.construct_set_cache_policy,
        }

    # --- blocks ---------------------------------------------------------------------------
    def parse_block(
        self, body: list[ast.stmt], kind: str, slot: YieldSlot | None = None, new_frame: bool = True
    ) -> Stmt:
        self.body.open_block(kind, slot)
        if new_frame:
            self.names.push_frame()
        try:
            body = close_returns(body)
            for i, s in enumerate(body):
                self.parse_stmt(s)
                if slot is not None and slot.node is s and i != len(body) - 1:
                    raise self.source.error(
                        ParserSyntaxError, "pl.yield_ must be the last statement of its block", body[i + 1]
                    )
        finally:
            if new_frame:
                self.names.pop_frame()
            stmts = self.body.close_block()
        return seq(stmts, self.source.span(body[0]) if body else None)

    def parse_stmt(self, node: ast.stmt) -> None:
        name = type(node).__name__
        if name in _UNSUPPORTED_STMTS:
            msg, hint = _UNSUPPORTED_STMTS[name]
            raise self.source.error(UnsupportedConstructError, msg, node, hint=hint)
        method = self.handlers.get(name)
        if method is None:
            raise self.source.error(UnsupportedConstructError, f"`{name}` statements are not supported", node)
        is_func_attr = self.is_construct_call(node, "func_attr")
        if not is_func_attr and not _is_docstring(node):
            self.body.prologue_open = False
        self.source.guarded(node, method, node)

    def is_construct_call(self, node: ast.stmt, kind: str) -> bool:
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return False
        try:
            fn = self.exprs.eval(node.value.func)
        except ParserError:
            return False
        return constructs.is_construct(fn, kind)

    # --- binding --------------------------------------------------------------------------
    def assign(self, name: str, value: Any, ann: Type | None, node: ast.AST, value_node: ast.AST) -> None:
        if isinstance(value, DynVar) or (ann is None and not isinstance(value, (DSLValue, bool, int, float))):
            if isinstance(value, tuple) and any(isinstance(v, DSLValue) for v in value):
                value = wrap(
                    MakeTuple(
                        [self.exprs.as_expr(v, value_node) for v in value], self.source.span(value_node)
                    )
                )
            else:
                self.names.set_value(name, value)  # a compile-time Python value
                return
        expr = self.value_expr(value, ann, value_node)
        vtype = expr.type
        if ann is not None:
            merged = merge_annotation(ann, vtype)
            if merged is None:
                raise self.source.error(
                    ParserTypeError,
                    f"{name!r} is annotated {describe_type(ann)} but the value "
                    f"has type {describe_type(vtype)}",
                    value_node,
                )
            vtype = merged
            if isinstance(expr, Call) and isinstance(expr.type, UnknownType):
                expr = expr.replace(type=merged)  # the annotation types an untyped op result
        var = self.names.bind_var(name, vtype, node)
        self.body.emit(Assign(var, expr, self.source.span(node)))

    def value_expr(self, value: Any, ann: Type | None, node: ast.AST) -> Expr:
        if isinstance(value, tuple) and isinstance(ann, TupleType):
            return MakeTuple(
                [self.value_expr(v, t, node) for v, t in zip(value, ann.types)], self.source.span(node)
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
            if isinstance(ann, ScalarType) and _index_and_int(ann, e.type):
                return Cast(e, ann.dtype, e.span)  # the reference treats INDEX as any integer
            return e
        if isinstance(ann, ScalarType) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return _retype_literal(value, ann, self.source.span(node))
        e = literal(value, None)
        if e is None:
            raise self.source.error(
                ParserTypeError, f"cannot assign {describe_value(value)} to a DSL variable", node
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
            raise self.source.error(
                UnsupportedConstructError, f"cannot assign to {ast.unparse(target)}", target
            )

    def unpack(self, target: ast.Tuple | ast.List, value: Any, node: ast.AST, value_node: ast.AST) -> None:
        elts = target.elts
        if isinstance(value, (tuple, list)):
            items = list(value)
        elif isinstance(value, TupleValue):
            items = self.tuple_items(value, "_".join(_target_names(target)), target, node, value_node)
        else:
            raise self.source.error(
                ParserTypeError, f"cannot unpack {describe_value(value)} into {len(elts)} names", value_node
            )
        if len(items) != len(elts):
            raise self.source.error(
                ParserTypeError, f"cannot unpack {len(items)} values into {len(elts)} names", target
            )
        for t, v in zip(elts, items):
            self.bind_target(t, v, None, node, value_node)

    def tuple_items(self, value: TupleValue, name: str, where: ast.AST, node: ast.AST,
                    value_node: ast.AST) -> list[Any]:
        """The elements of a tuple-typed value (a call returning several values), read from a
        variable `name` bound to it first when it is not one."""
        expr = value.unwrap()
        if not isinstance(expr, Var):
            tmp = self.names.bind_var(name, expr.type, where)
            self.body.emit(Assign(tmp, expr, self.source.span(node)))
            expr = tmp
        span = self.source.span(value_node)
        return [wrap(TupleGetItem(expr, i, span)) for i in range(len(expr.type.types))]

    def subscript_write(self, target: ast.Subscript, value: Any, node: ast.AST) -> None:
        """`out[a:b, c:d] = t` writes a tensor/tile into a region and rebinds `out`; an integer
        index is a unit axis of the region that `t` need not have (`out[r] = t`); `out[i, j] = s`
        writes one element."""
        if not isinstance(target.value, ast.Name):
            raise self.source.error(
                UnsupportedConstructError, "only a named tensor/tile can be written by subscript", target
            )
        base = self.exprs.eval(target.value)
        key = self.exprs.eval_index(target.slice)
        keys = key if isinstance(key, tuple) else (key,)
        self.state.span = self.source.span(node)
        if not isinstance(base, DSLValue):
            raise self.source.error(
                ParserTypeError, f"cannot write into {describe_value(base)} by subscript", target.value
            )
        btype = base.type
        if not isinstance(btype, (TensorType, TileType)):
            if type(base).__name__ == "Array":
                new = ops.array.update_element(base, keys[0], value)
                self.assign(target.value.id, new, None, target.value, node)
                return
            raise self.source.error(
                ParserTypeError, f"cannot write into {describe_value(base)} by subscript", target.value
            )
        if not isinstance(getattr(value, "type", None), (TensorType, TileType)):
            self.body.emit(
                Eval(unified_call("write", (base, list(keys), value), {}).unwrap(), self.source.span(node))
            )
            return
        offsets, sizes = slice_bounds(base, keys)
        lifted = value.type.rank != len(sizes)  # an integer index dropped its axis from the window
        if isinstance(btype, TensorType) and isinstance(value.type, TileType):
            new = unified_call("store", (value, offsets, base), {"shapes": sizes} if lifted else {})
        else:
            if lifted:
                value = unified_call("reshape", (value, sizes), {})
            new = unified_call("assemble", (base, value, offsets), {})
        self.assign(target.value.id, new, None, target.value, node)

    # --- statements -----------------------------------------------------------------------
    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.source.error(
                UnsupportedConstructError, "chained assignment `a = b = x` is not supported", node
            )
        self.assign_statement(node.targets[0], node.value, None, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            raise self.source.error(ParserSyntaxError, "an annotated name needs a value", node)
        ann = self.types.annotation(node.annotation)
        self.assign_statement(node.target, node.value, ann, node)

    def assign_statement(
        self, target: ast.expr, value_node: ast.expr, ann: Type | None, node: ast.stmt
    ) -> None:
        if isinstance(value_node, ast.Call) and constructs.is_construct(
            self.exprs.eval(value_node.func), "yield"
        ):
            self.yield_statement(value_node, target, ann, node)
            return
        value = self.exprs.eval(value_node)
        self.bind_target(target, value, ann, node, value_node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.source.error(
                UnsupportedConstructError, "augmented assignment to a subscript is not supported", node.target
            )
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.source.error(
                UnsupportedConstructError, f"operator {type(node.op).__name__} is not supported", node
            )
        current = self.exprs.eval(
            ast.Name(
                node.target.id,
                ast.Load(),
                lineno=node.lineno,
                col_offset=node.col_offset,
                end_lineno=node.end_lineno,
                end_col_offset=node.end_col_offset,
            )
        )
        rhs = self.exprs.eval(node.value)
        self.state.span = self.source.span(node)
        try:
            value = binary_operator(op, current, rhs)
        except ParserError as e:
            raise self.source.locate(e, node) from None
        self.assign(node.target.id, value, None, node.target, node)

    def stmt_Expr(self, node: ast.Expr) -> None:
        v = node.value
        if isinstance(v, ast.Constant):
            return  # docstrings and `...`
        if isinstance(v, ast.Call):
            fn = self.exprs.eval(v.func)
            kind = getattr(fn, "pl_construct", None)
            handler = self.constructs.get(kind) if kind else None
            if handler is not None:
                handler(v, node)
                return
        value = self.exprs.eval(v)
        if isinstance(value, DSLValue):
            self.body.emit(Eval(value.unwrap(), self.source.span(node)))

    def construct_yield(self, call: ast.Call, node: ast.stmt) -> None:
        """A bare `pl.yield_(..)`: values flow to no named return vars."""
        self.yield_statement(call, None, None, node)

    def yield_statement(
        self, call: ast.Call, target: ast.expr | None, ann: Type | None, node: ast.stmt
    ) -> None:
        slot = self.body.current_slot
        if slot is None:
            raise self.source.error(
                ParserSyntaxError,
                "pl.yield_ is only valid as the last statement of a loop with "
                "init_values, a pl.while_ body or an if/else branch",
                node,
            )
        if call.keywords:
            raise self.source.error(ParserSyntaxError, "pl.yield_ takes positional values only", call)
        values = [self.exprs.as_expr(self.exprs.eval(a), a) for a in call.args]
        names: list[tuple[str, Type | None, ast.AST]] = []
        if target is not None:
            elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for t in elts:
                if not isinstance(t, ast.Name):
                    raise self.source.error(ParserSyntaxError, "pl.yield_ targets must be plain names", t)
                names.append((t.id, ann if len(elts) == 1 else None, t))
            if len(names) != len(values):
                raise self.source.error(
                    ParserSyntaxError, f"pl.yield_ yields {len(values)} values into {len(names)} names", node
                )
        slot.values, slot.targets, slot.node = values, names, node
        self.body.emit(Yield(values, self.source.span(node)))

    def stmt_Return(self, node: ast.Return) -> None:
        if any(not k.startswith("scope:") for k in self.body.loop_kinds):
            raise self.source.error(
                UnsupportedConstructError, "return inside a loop is not supported", node,
                hint="leave the loop with break, then return after it",
            )
        outlined = [name for name, kind, _ in self.body.scope_stack if kind in OUTLINED_SCOPES]
        if outlined:
            raise self.source.error(
                UnsupportedConstructError, f"return inside a pl.{outlined[-1]} scope is not supported: "
                "the scope becomes a kernel of its own", node, hint="return after the scope",
            )
        v = node.value
        raw = (
            []
            if v is None
            else [self.exprs.eval(e) for e in v.elts]
            if isinstance(v, ast.Tuple)
            else [self.exprs.eval(v)]
        )
        declared = self.body.declared_returns
        if len(raw) == 1 and isinstance(raw[0], TupleValue) and (declared is None or len(declared) != 1):
            raw = self.tuple_items(raw[0], "ret", v, node, v)  # `return self.f(...)` of several values
        if declared is not None and len(raw) != len(declared):
            raise self.source.error(
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
                    raise self.source.error(
                        ParserTypeError,
                        f"return value {i} has type {describe_type(e.type)} but "
                        f"the function declares {describe_type(t)}",
                        node,
                    )
        elif self.body.seen_returns is None:
            self.body.seen_returns = [e.type for e in values]
        self.body.emit(Return(values, self.source.span(node)))

    def stmt_Pass(self, node: ast.Pass) -> None:
        """`pass` emits nothing."""

    def stmt_Break(self, node: ast.Break) -> None:
        self._check_loop_exit("break", node)
        self.body.emit(Break(self.source.span(node)))

    def stmt_Continue(self, node: ast.Continue) -> None:
        self._check_loop_exit("continue", node)
        self.body.emit(Continue(self.source.span(node)))

    def _check_loop_exit(self, word: str, node: ast.stmt) -> None:
        """`break` / `continue` leave a sequential loop only: a parallel loop's iterations
        have no order, an unrolled one has no loop left, and a spmd / split_aiv body is a
        scope over blocks or lanes."""
        if all(k.startswith("scope:") for k in self.body.loop_kinds):
            raise self.source.error(ParserSyntaxError, f"{word} outside a loop", node)
        kind = self.body.loop_kinds[-1]
        if kind.startswith("scope:"):
            raise self.source.error(InvalidOperationError, f"'{word}' inside a {kind[6:]} scope cannot leave "
                                    "the loop around it: the scope becomes a function of its own", node,
                                    hint=f"set a flag in the scope and {word} after it")
        if kind in ("parallel", "unroll", "spmd", "split_aiv"):
            what = {"parallel": "a pl.parallel loop", "unroll": "an unrolled (pl.unroll) loop",
                    "spmd": "a pl.spmd body", "split_aiv": "a pl.split_aiv body"}[kind]
            raise self.source.error(InvalidOperationError, f"'{word}' is not supported in {what}", node,
                                    hint=f"'{word}' leaves only a sequential loop (pl.range, "
                                    "pl.pipeline, while or pl.while_)")

    def stmt_If(self, node: ast.If) -> None:
        cond = self.exprs.eval(node.test)
        if not isinstance(cond, DSLValue):
            for s in node.body if cond else node.orelse:  # compile-time condition: keep one branch
                self.parse_stmt(s)
            return
        c = cond.unwrap()
        if not isinstance(c.type, ScalarType):
            raise self.source.error(
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
                raise self.source.error(
                    ParserSyntaxError,
                    "an if that yields values needs pl.yield_ at the end of both branches",
                    where,
                )
            if len(then_slot.values) != len(else_slot.values):
                raise self.source.error(
                    ParserSyntaxError,
                    f"the branches yield {len(then_slot.values)} and {len(else_slot.values)} values",
                    else_slot.node,
                )
            for (name, ann, tnode), tv, ev in zip(then_slot.targets, then_slot.values, else_slot.values):
                if merge_annotation(tv.type, ev.type) is None:
                    raise self.source.error(
                        ParserTypeError,
                        f"branches yield {describe_type(tv.type)} and {describe_type(ev.type)} for {name!r}",
                        else_slot.node,
                    )
                return_vars.append(Var(name, ann or tv.type, self.source.span(tnode)))
        self.body.emit(If(c, then_body, else_body, return_vars, self.source.span(node)))
        for (name, _, tnode), rv in zip(then_slot.targets, return_vars):
            self.names.declare(name, rv, tnode)


def _retype_literal(value: Any, t: ScalarType, span: Any) -> Expr:
    if t.dtype.is_float:
        return ConstFloat(float(value), t.dtype, span)
    if isinstance(value, float):
        raise ParserTypeError(f"cannot store float {value!r} in a {t.dtype.name} scalar")
    return int_literal(value, t.dtype, span)


def _index_and_int(ann: ScalarType, t: Type) -> bool:
    """`t` is a different integer scalar type than `ann`, one of them INDEX."""
    if not isinstance(t, ScalarType) or t.dtype is ann.dtype:
        return False
    return t.dtype.is_int and ann.dtype.is_int and INDEX in (t.dtype, ann.dtype)


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

