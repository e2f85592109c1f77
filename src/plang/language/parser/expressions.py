"""Expression evaluation: AST expressions → Python constants or DSL values (IR)."""

from __future__ import annotations

import ast
import builtins
import difflib
from enum import Enum
from typing import Any

from ...dtypes import TASK_ID, DataType
from ...errors import (
    ParserError,
    ParserNameError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedConstructError,
)
from ...ir.enums import ParamDirection
from ...ir.expr import Call, Cast, Expr, GlobalVar, Var
from ...ir.function import Function
from ...ir.span import Span
from ...ir.types import ScalarType, ShapedType, TupleType, Type
from .. import constructs
from ..dispatch import ParseState, binary_operator, literal, logical, unary_operator
from ..values import DSLValue, DynVar, TypeSpec, wrap
from .predicates import predicate_shape_error, unlisted_producer
from .source import Source

SAFE_BUILTINS: dict[str, Any] = {
    n: getattr(builtins, n)
    for n in (
        "len",
        "min",
        "max",
        "abs",
        "int",
        "float",
        "bool",
        "tuple",
        "list",
        "True",
        "False",
        "None",
        "print",
        "isinstance",
        "str",
        "round",
        "sum",
        "divmod",
    )
}

_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


class Signature:
    """What a call site needs to know about a DSL function: parameters and results."""

    __slots__ = ("name", "params", "directions", "return_types")

    def __init__(self, name: str, params: list[Var], directions: list[Any], return_types: list[Type]) -> None:
        self.name, self.params, self.directions, self.return_types = name, params, directions, return_types

    @property
    def result_type(self) -> Type:
        rt = self.return_types
        return rt[0] if len(rt) == 1 else TupleType(rt)


class FunctionRef:
    """`self.kernel` inside a program (or a module-level DSL function): a callable target."""

    __slots__ = ("sig",)

    def __init__(self, sig: Signature) -> None:
        self.sig = sig


class ProgramSelf:
    """The `self` of a program method: attribute access yields the program's functions."""

    __slots__ = ("program_name", "signatures")

    def __init__(self, program_name: str, signatures: dict[str, Signature]) -> None:
        self.program_name, self.signatures = program_name, signatures


class MultiReturn:
    """`-> tuple[T1, T2]`: several return types."""

    __slots__ = ("specs",)

    def __init__(self, specs: list[Any]) -> None:
        self.specs = specs


def _call_result_type(sig: Signature, args: list[Expr]) -> Type:
    """The callee's result type with its dynamic dims bound to the arguments' dims
    (`f(x: Tensor[[N, 64]]) -> Tensor[[N, 64]]` called on a [128, 64] tensor gives [128, 64])."""
    dims: dict[Var, Expr] = {}
    for p, a in zip(sig.params, args):
        pt, at = p.type, a.type
        if isinstance(pt, ShapedType) and isinstance(at, ShapedType) and pt.rank == at.rank:
            for d, actual in zip(pt.shape, at.shape):
                if isinstance(d, Var):
                    dims.setdefault(d, actual)

    def bind(t: Type) -> Type:
        if isinstance(t, TupleType):
            return TupleType([bind(x) for x in t.types])
        if isinstance(t, ShapedType):
            return t.replace(shape=tuple(dims.get(d, d) if isinstance(d, Var) else d for d in t.shape))
        return t

    return bind(sig.result_type) if dims else sig.result_type


def signature_of(fn: Function) -> Signature:
    return Signature(fn.name, list(fn.params), list(fn.param_directions), list(fn.return_types))


class ExprEvaluator(ParseState):
    """Evaluates expressions against the DSL environment; subclasses add statements."""

    src: Source
    env: list[dict[str, Any]]
    closure: dict[str, Any]
    globals: dict[str, Any]
    dump_tags: list[Var] = []

    # --- errors ---------------------------------------------------------------------------
    def error(
        self,
        cls: type[ParserError],
        message: str,
        node: ast.AST | Span,
        hint: str = "",
        code: str | None = None,
    ) -> ParserError:
        span = node if isinstance(node, Span) else self.src.span(node)
        return self.src.locate(cls(message, span, hint=hint, code=code), span)

    def locate(self, err: ParserError, node: ast.AST) -> ParserError:
        return self.src.locate(err, self.src.span(node))

    # --- names ----------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Any:
        for frame in reversed(self.env):
            if name in frame:
                v = frame[name]
                return wrap(v) if isinstance(v, Var) else v
        for scope in (self.closure, self.globals):
            if name in scope:
                return scope[name]
        if name in SAFE_BUILTINS:
            return SAFE_BUILTINS[name]
        if hasattr(builtins, name):
            raise self.error(
                UnsupportedConstructError,
                f"the Python builtin {name!r} is not supported in a DSL function",
                node,
                hint=f"use pl.{name}" if name in ("range", "min", "max", "abs") else "",
            )
        known = [n for f in self.env for n in f] + list(self.closure) + list(self.globals)
        close = difflib.get_close_matches(name, known, n=1)
        raise self.error(
            ParserNameError,
            f"name {name!r} is not defined",
            node,
            hint=f"did you mean {close[0]!r}?"
            if close
            else "define it in the function, or at module level before the DSL function",
        )

    def local_var(self, name: str) -> Var | None:
        for frame in reversed(self.env):
            if name in frame:
                v = frame[name]
                return v if isinstance(v, Var) else None
        return None

    # --- evaluation -----------------------------------------------------------------------
    def eval(self, node: ast.expr) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise self.error(
                UnsupportedConstructError,
                f"{_describe_node(node)} is not supported in a DSL function",
                node,
                hint=_UNSUPPORTED_HINTS.get(type(node).__name__, ""),
            )
        try:
            return method(node)
        except ParserError as e:
            raise self.locate(e, node) from None

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        if isinstance(base, ProgramSelf):
            sig = base.signatures.get(node.attr)
            if sig is None:
                close = difflib.get_close_matches(node.attr, list(base.signatures), n=1)
                raise self.error(
                    ParserNameError,
                    f"program {base.program_name!r} has no function {node.attr!r}",
                    node,
                    hint=f"did you mean self.{close[0]}?" if close else "",
                )
            return FunctionRef(sig)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            owner = ast.unparse(node.value)
            raise self.error(ParserNameError, f"{owner} has no attribute {node.attr!r}", node) from None

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
            raise self.error(
                ParserTypeError, f"cannot subscript {ast.unparse(node.value)}: {e}", node
            ) from None

    def eval_index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            if node.step is not None:
                raise self.error(UnsupportedConstructError, "slice steps are not supported", node)
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
        name = _BINOPS.get(type(node.op))
        if name is None:
            raise self.error(
                UnsupportedConstructError, f"operator {ast.unparse(node)!r} is not supported", node
            )
        lhs, rhs = self.eval(node.left), self.eval(node.right)
        self.span = self.src.span(node)
        return binary_operator(name, lhs, rhs)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        self.span = self.src.span(node)
        if isinstance(node.op, ast.USub):
            return unary_operator("neg", v)
        if isinstance(node.op, ast.Not):
            return unary_operator("not", v)
        if isinstance(node.op, ast.UAdd):
            return v
        raise self.error(UnsupportedConstructError, "bitwise inversion `~` is not supported", node)

    def eval_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.eval(v) for v in node.values]
        self.span = self.src.span(node)
        return logical("and" if isinstance(node.op, ast.And) else "or", values)

    def eval_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        parts = []
        for op, right_node in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op))
            if name is None:
                raise self.error(
                    UnsupportedConstructError,
                    f"comparison {ast.unparse(node)!r} is not supported",
                    node,
                    hint="use == != < <= > >=",
                )
            right = self.eval(right_node)
            self.span = self.src.span(node)
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
                raise self.error(UnsupportedConstructError, "`**` in a dict literal is not supported", node)
            out[self.eval(k)] = self.eval(v)
        return out

    def eval_IfExp(self, node: ast.IfExp) -> Any:
        test = self.eval(node.test)
        if isinstance(test, DSLValue):
            raise self.error(
                UnsupportedConstructError,
                "a conditional expression on a DSL value is not supported",
                node,
                hint="use an if statement with pl.yield_",
            )
        return self.eval(node.body if test else node.orelse)

    # --- calls ----------------------------------------------------------------------------
    def eval_Call(self, node: ast.Call) -> Any:
        fn = self.eval(node.func)
        if fn is constructs.submit or fn is constructs.spmd_submit:
            return self.eval_submit(node, spmd=fn is constructs.spmd_submit)
        if isinstance(fn, FunctionRef) or isinstance(fn, Function):
            sig = fn.sig if isinstance(fn, FunctionRef) else signature_of(fn)
            args, no_dep = self.call_args(node)
            kwargs = self.call_kwargs(node, {"dump_vars", "arg_directions"}, f"{sig.name}()")
            if no_dep:
                kwargs["no_dep_args"] = no_dep
            return wrap(self.function_call(sig, args, node, kwargs))
        inline = getattr(fn, "pl_inline", None)
        if inline is not None:
            return self.expand_inline(fn, node)  # type: ignore[attr-defined]
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.error(UnsupportedConstructError, "`*args` in a DSL call is not supported", a)
            args.append(self.eval(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(
                    UnsupportedConstructError, "`**kwargs` in a DSL call is not supported", kw.value
                )
            kwargs[kw.arg] = self.eval(kw.value)
        return self.call_python(fn, args, kwargs, node)

    def call_python(self, fn: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        if not _callable_at_parse_time(fn):
            raise self.error(
                UnsupportedConstructError,
                f"calling {ast.unparse(node.func)} (a Python "
                "function) inside a DSL function is not supported",
                node,
                hint="DSL bodies may call pl.* ops, other DSL functions and @pl.inline helpers",
            )
        self.span = self.src.span(node)
        try:
            return fn(*args, **kwargs)
        except ParserError as e:
            raise self.locate(e, node) from None
        except TypeError as e:
            raise self.error(ParserTypeError, f"{ast.unparse(node.func)}: {e}", node) from None
        except ValueError as e:
            raise self.error(ParserTypeError, f"{ast.unparse(node.func)}: {e}", node) from None

    def call_args(self, node: ast.Call, skip: int = 0) -> tuple[list[Any], tuple[int, ...]]:
        """Positional args of a kernel call; `pl.no_dep(x)` wrappers give their positions."""
        args, no_dep = [], []
        for i, a in enumerate(node.args[skip:]):
            if isinstance(a, ast.Call) and self.eval(a.func) is constructs.no_dep:
                if len(a.args) != 1 or a.keywords:
                    raise self.error(ParserSyntaxError, "pl.no_dep takes exactly one tensor", a)
                no_dep.append(i)
                a = a.args[0]
            args.append(self.eval(a))
        return args, tuple(no_dep)

    def call_kwargs(self, node: ast.Call, allowed: set[str], what: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg not in allowed:
                raise self.error(
                    ParserSyntaxError,
                    f"{what} got an unexpected keyword {kw.arg!r}",
                    kw.value,
                    hint=f"allowed keywords: {', '.join(sorted(allowed))}",
                )
            out[kw.arg] = self.scope_attr_value(kw.arg, self.eval(kw.value), kw.value)
        return out

    def function_call(
        self,
        sig: Signature,
        args: list[Any],
        node: ast.AST,
        kwargs: dict[str, Any],
        result: Type | None = None,
    ) -> Call:
        if len(args) != len(sig.params):
            raise self.error(
                ParserTypeError,
                f"{sig.name}() takes {len(sig.params)} arguments "
                f"({', '.join(p.name for p in sig.params)}), got {len(args)}",
                node,
            )
        exprs = []
        for p, a in zip(sig.params, args):
            exprs.append(self.argument(sig.name, p, a, node))
        tagged = tuple(v for v in self.dump_tags if any(e is v for e in exprs))
        if tagged and "dump_vars" not in kwargs:
            kwargs = {**kwargs, "dump_vars": tagged}
        return Call(
            GlobalVar(sig.name, self.src.span(node)),
            exprs,
            kwargs,
            result or _call_result_type(sig, exprs),
            self.src.span(node),
        )

    def argument(self, fname: str, param: Var, value: Any, node: ast.AST) -> Expr:
        from ...ir.types import ShapedType, describe_type

        pt = param.type
        hint_dtype = pt.dtype if isinstance(pt, ScalarType) else None
        e = value.unwrap() if isinstance(value, DSLValue) else literal(value, hint_dtype)
        if e is None:
            raise self.error(
                ParserTypeError,
                f"argument {param.name!r} of {fname}() must be a DSL value, "
                f"got {type(value).__name__} {value!r}",
                node,
            )
        at = e.type
        bad = type(at) is not type(pt) or (
            isinstance(pt, (ShapedType, ScalarType))
            and at.dtype is not pt.dtype
            and not (isinstance(pt, ScalarType) and at.dtype.is_int and pt.dtype.is_int)
        )
        if bad:
            raise self.error(
                ParserTypeError,
                f"argument {param.name!r} of {fname}() expects {describe_type(pt)}, got {describe_type(at)}",
                node,
            )
        if isinstance(pt, ScalarType) and at.dtype is not pt.dtype:  # implicit integer conversion
            return Cast(e, pt.dtype, e.span)
        return e

    def eval_submit(self, node: ast.Call, spmd: bool) -> Any:
        what = "pl.spmd_submit" if spmd else "pl.submit"
        if not node.args:
            raise self.error(
                ParserSyntaxError, f"{what} needs the kernel first: {what}(self.kernel, args...)", node
            )
        target = self.eval(node.args[0])
        if not isinstance(target, (FunctionRef, Function)):
            raise self.error(
                ParserTypeError,
                f"{what}: the first argument must be a DSL function such as self.kernel",
                node.args[0],
            )
        sig = target.sig if isinstance(target, FunctionRef) else signature_of(target)
        args, no_dep = self.call_args(node, skip=1)
        allowed = {"deps", "allow_early_resolve", "predicate", "dumps", "dump_vars", "arg_directions"} | (
            {"core_num", "sync_start"} if spmd else set()
        )
        kwargs = {"spmd_submit" if spmd else "submit": True, **self.call_kwargs(node, allowed, what)}
        if spmd and "core_num" not in kwargs:
            raise self.error(ParserSyntaxError, "pl.spmd_submit needs core_num=<n>", node)
        for flag in ("allow_early_resolve", "sync_start"):
            if kwargs.get(flag) is False:
                del kwargs[flag]
        if no_dep:
            kwargs["no_dep_args"] = no_dep
        if "predicate" in kwargs:
            self.check_predicate(kwargs["predicate"], kwargs.get("deps", ()), node)
        result = TupleType([sig.result_type, ScalarType(TASK_ID)])
        return wrap(self.function_call(sig, args, node, kwargs, result))

    def check_predicate(self, predicate: Expr, deps: tuple, node: ast.Call) -> None:
        where = next(kw.value for kw in node.keywords if kw.arg == "predicate")
        problem = predicate_shape_error(predicate)
        if problem is not None:
            raise self.error(ParserTypeError, problem, where,
                             hint="reduce a richer condition to one gate value in a prior kernel")
        producer = unlisted_producer(predicate, deps, getattr(self, "blocks", ()))
        if producer is not None:
            tensor = predicate.lhs.args[0].name
            raise self.error(
                ParserTypeError,
                f"predicate= reads {tensor!r}, produced by task {producer.name!r}, which is not in deps=",
                where,
                hint=f"add it: deps=[..., {producer.name}], so the dispatch-time read sees its result",
            )

    def scope_attr_value(self, key: str, value: Any, node: ast.AST) -> Any:
        """A keyword value as a Scope / Call attribute (exprs, tuples, plain values)."""
        if key == "cache_policies":
            pairs = value if isinstance(value, (list, tuple)) else None
            if pairs is None or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
                raise self.error(ParserTypeError, "cache_policies= takes [[tensor, policy], ...]", node)
            return tuple((self.as_expr(t, node), p) for t, p in pairs)
        if key in ("deps", "no_dep_args", "dumps", "dump_vars"):
            if not isinstance(value, (list, tuple)):
                raise self.error(ParserTypeError, f"{key}= takes a list, got {type(value).__name__}", node)
            return tuple(None if v is None else self.as_expr(v, node) for v in value)
        if key == "arg_directions":
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, ParamDirection) for v in value):
                raise self.error(ParserTypeError, "arg_directions= takes a list of pl.ParamDirection", node)
            return tuple(value)
        if key == "predicate":
            e = self.as_expr(value, node)
            if not (isinstance(e.type, ScalarType) and e.type.dtype.is_bool):
                raise self.error(
                    ParserTypeError, "predicate= must be a comparison such as (t[0, 0] > 0)", node
                )
            return e
        if key == "core_num":
            if isinstance(value, bool) or not isinstance(value, (int, DSLValue)):
                raise self.error(ParserTypeError, f"core_num must be an integer, got {value!r}", node)
            return value if isinstance(value, int) else value.unwrap()
        if key in ("allow_early_resolve", "sync_start", "windowize") and not isinstance(value, bool):
            raise self.error(ParserTypeError, f"{key}= takes True or False, got {value!r}", node)
        return value

    def as_expr(self, value: Any, node: ast.AST) -> Expr:
        e = value.unwrap() if isinstance(value, DSLValue) else literal(value, None)
        if e is None:
            raise self.error(
                ParserTypeError, f"expected a DSL value, got {type(value).__name__} {value!r}", node
            )
        return e

    def eval_static(self, node: ast.expr) -> Any:
        """Evaluate an expression that must be a compile-time Python value."""
        v = self.eval(node)
        if isinstance(v, DSLValue) and not isinstance(v, DynVar):
            raise self.error(ParserTypeError, f"{ast.unparse(node)} must be a compile-time constant", node)
        return v


def _callable_at_parse_time(fn: Any) -> bool:
    if (
        fn in SAFE_BUILTINS.values()
        or isinstance(fn, (DataType, type))
        and (isinstance(fn, DataType) or issubclass(fn, (Enum, TypeSpec)))
    ):
        return True
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "")
    return callable(fn) and (module or "").startswith("plang")


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

__all__ = ["ExprEvaluator", "FunctionRef", "MultiReturn", "ProgramSelf", "Signature"]
