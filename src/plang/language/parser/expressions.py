"""Expression evaluation: AST expressions → Python constants or DSL values (IR)."""

from __future__ import annotations

import ast
import difflib
from typing import Any

from ...errors import (
    ParserError,
    ParserNameError,
    ParserTypeError,
    UnsupportedConstructError,
    raised_by_plang,
)
from ...ir.expr import Expr
from ...ir.types import describe_value
from ..dispatch import ParseState, binary_operator, literal, logical, unary_operator
from ..values import DSLValue, DynVar
from .body import Body
from .calls import CallParser, FunctionRef, ProgramSelf
from .names import NameScopes
from .source import SourceTracker
from .types import MultiReturn

BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
    ast.LShift: "shl",
    ast.RShift: "shr",
}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


class ExprEvaluator:
    """Evaluates expressions against the DSL environment; calls go to its `CallParser`."""

    def __init__(self, source: SourceTracker, names: NameScopes, state: ParseState, body: Body) -> None:
        self.source, self.names, self.state = source, names, state
        self.calls = CallParser(self, body)

    def eval(self, node: ast.expr) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise self.source.error(
                UnsupportedConstructError,
                f"{_describe_node(node)} is not supported in a DSL function",
                node,
                hint=_UNSUPPORTED_HINTS.get(type(node).__name__, ""),
            )
        return self.source.guarded(node, method, node)

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Name(self, node: ast.Name) -> Any:
        return self.names.lookup(node.id, node)

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        if node.attr.startswith("_") and not isinstance(base, ProgramSelf):
            raise self.source.error(  # no way into plang's internals (`__globals__`, private helpers)
                UnsupportedConstructError,
                f"the private attribute {node.attr!r} is not reachable in a DSL function",
                node,
            )
        if isinstance(base, ProgramSelf):
            sig = base.signatures.get(node.attr)
            if sig is None:
                close = difflib.get_close_matches(node.attr, list(base.signatures), n=1)
                raise self.source.error(
                    ParserNameError,
                    f"program {base.program_name!r} has no function {node.attr!r}",
                    node,
                    hint=f"did you mean self.{close[0]}?" if close else "",
                )
            return FunctionRef(sig)
        try:
            return getattr(base, node.attr)
        except AttributeError as e:
            if e.name != node.attr or e.obj is not base:  # raised by code behind the attribute
                raise
            owner = ast.unparse(node.value)
            raise self.source.error(
                ParserNameError, f"{owner} has no attribute {node.attr!r}", node
            ) from None

    def eval_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        key = self.eval_index(node.slice)
        if base is tuple:
            return MultiReturn(list(key) if isinstance(key, tuple) else [key])
        try:
            return base[key]
        except ParserError:
            raise
        except (TypeError, IndexError, KeyError) as e:
            if raised_by_plang(e):
                raise
            raise self.source.error(
                ParserTypeError, f"cannot subscript {ast.unparse(node.value)}: {e}", node
            ) from None

    def eval_index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            if node.step is not None:
                raise self.source.error(UnsupportedConstructError, "slice steps are not supported", node)
            return slice(
                None if node.lower is None else self.eval(node.lower),
                None if node.upper is None else self.eval(node.upper),
            )
        if isinstance(node, ast.Tuple):
            return tuple(self.eval_index(e) for e in node.elts)
        return self.eval(node)

    def eval_Slice(self, node: ast.Slice) -> Any:
        return self.eval_index(node)

    def eval_BinOp(self, node: ast.BinOp) -> Any:
        name = BINOPS.get(type(node.op))
        if name is None:
            raise self.source.error(
                UnsupportedConstructError, f"operator {ast.unparse(node)!r} is not supported", node
            )
        lhs, rhs = self.eval(node.left), self.eval(node.right)
        self.state.span = self.source.span(node)
        return binary_operator(name, lhs, rhs)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        self.state.span = self.source.span(node)
        if isinstance(node.op, ast.USub):
            return unary_operator("neg", v)
        if isinstance(node.op, ast.Not):
            return unary_operator("not", v)
        if isinstance(node.op, ast.UAdd):
            return v
        raise self.source.error(UnsupportedConstructError, "bitwise inversion `~` is not supported", node)

    def eval_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.eval(v) for v in node.values]
        self.state.span = self.source.span(node)
        return logical("and" if isinstance(node.op, ast.And) else "or", values)

    def eval_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        parts = []
        for op, right_node in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op))
            if name is None:
                raise self.source.error(
                    UnsupportedConstructError,
                    f"comparison {ast.unparse(node)!r} is not supported",
                    node,
                    hint="use == != < <= > >=",
                )
            right = self.eval(right_node)
            self.state.span = self.source.span(node)
            parts.append(binary_operator(name, left, right))
            left = right
        return parts[0] if len(parts) == 1 else logical("and", parts)

    def eval_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.eval(e) for e in node.elts)

    def eval_List(self, node: ast.List) -> list:
        return [self.eval(e) for e in node.elts]

    def eval_Dict(self, node: ast.Dict) -> dict:
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.source.error(
                    UnsupportedConstructError, "`**` in a dict literal is not supported", node
                )
            out[self.eval(k)] = self.eval(v)
        return out

    def eval_IfExp(self, node: ast.IfExp) -> Any:
        test = self.eval(node.test)
        if isinstance(test, DSLValue):
            raise self.source.error(
                UnsupportedConstructError,
                "a conditional expression on a DSL value is not supported",
                node,
                hint="use an if statement with pl.yield_",
            )
        return self.eval(node.body if test else node.orelse)

    def eval_Call(self, node: ast.Call) -> Any:
        return self.calls.call(node)

    def as_expr(self, value: Any, node: ast.AST) -> Expr:
        e = value.unwrap() if isinstance(value, DSLValue) else literal(value, None)
        if e is None:
            raise self.source.error(
                ParserTypeError, f"expected a DSL value, got {describe_value(value)}", node
            )
        return e

    def eval_static(self, node: ast.expr) -> Any:
        """Evaluate an expression that must be a compile-time Python value."""
        v = self.eval(node)
        if isinstance(v, DSLValue) and not isinstance(v, DynVar):
            raise self.source.error(
                ParserTypeError, f"{ast.unparse(node)} must be a compile-time constant", node
            )
        return v


def _describe_node(node: ast.AST) -> str:
    names = {
        "Lambda": "lambda",
        "ListComp": "a list comprehension",
        "GeneratorExp": "a generator",
        "DictComp": "a dict comprehension",
        "SetComp": "a set comprehension",
        "Await": "await",
        "Yield": "Python `yield`",
        "YieldFrom": "yield from",
        "NamedExpr": "the walrus operator",
        "JoinedStr": "an f-string",
        "Set": "a set literal",
        "Starred": "`*` unpacking",
    }
    return names.get(type(node).__name__, f"`{type(node).__name__}` expression")


_UNSUPPORTED_HINTS = {
    "Lambda": "define a @pl.inline helper or a @pl.function instead",
    "ListComp": "write the list out, or use a pl.range loop",
    "Yield": "use pl.yield_(...) to carry values out of a loop or branch",
}

__all__ = ["BINOPS", "ExprEvaluator"]
