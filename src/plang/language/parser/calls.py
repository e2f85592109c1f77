"""Calls in a DSL body: other DSL functions (`self.kernel(...)`, `pl.submit`), `@pl.inline`
helpers, and `pl.*` wrappers or other parse-time Python callables."""

from __future__ import annotations

import ast
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable

from ...dtypes import TASK_ID, DataType
from ...errors import (
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedConstructError,
    raised_by_plang,
)
from ...ir.enums import ParamDirection
from ...ir.expr import Call, Cast, Expr, GlobalVar, Var
from ...ir.function import Function
from ...ir.ops import OpTypeError, OpValueError
from ...ir.types import (
    ScalarType,
    ShapedType,
    TensorType,
    TupleType,
    Type,
    describe_type,
    describe_value,
    dim_value,
)
from .. import constructs
from ..dispatch import literal
from ..values import DSLValue, TypeSpec, wrap
from .body import Body
from .names import SAFE_BUILTINS
from .predicates import predicate_shape_error, unlisted_producer

if TYPE_CHECKING:
    from .expressions import ExprEvaluator


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

    @property
    def dsl_description(self) -> str:
        return f"the function {self.sig.name!r} (a function is called, not a value)"


class ProgramSelf:
    """The `self` of a program method: attribute access yields the program's functions."""

    __slots__ = ("program_name", "signatures")

    def __init__(self, program_name: str, signatures: dict[str, Signature]) -> None:
        self.program_name, self.signatures = program_name, signatures

    @property
    def dsl_description(self) -> str:
        return f"the program {self.program_name!r} itself (self)"


def _int_like(dtype: DataType) -> bool:
    """Integer or BOOL: a call argument converts implicitly between these (0/1 flags)."""
    return dtype.is_int or dtype.is_bool


def _call_result_type(sig: Signature, dims: dict[Var, Expr]) -> Type:
    """The callee's result type with its dynamic dims bound to the arguments' dims
    (`f(x: Tensor[[N, 64]]) -> Tensor[[N, 64]]` called on a [128, 64] tensor gives [128, 64])."""

    def bind(t: Type) -> Type:
        if isinstance(t, TupleType):
            return TupleType([bind(x) for x in t.types])
        if isinstance(t, ShapedType):
            return t.replace(shape=tuple(dims.get(d, d) if isinstance(d, Var) else d for d in t.shape))
        return t

    return bind(sig.result_type) if dims else sig.result_type


def signature_of(fn: Function) -> Signature:
    return Signature(fn.name, list(fn.params), list(fn.param_directions), list(fn.return_types))


class CallParser:
    """Evaluates call expressions for an `ExprEvaluator` (its names, source and parse state).

    `expand_inline(fn, call)` splices an `@pl.inline` helper's body at a call site; the
    `StatementParser` sets it (None where no statements are parsed: a module's decorators)."""

    def __init__(self, exprs: ExprEvaluator, body: Body) -> None:
        self.exprs, self.source, self.state, self.body = exprs, exprs.source, exprs.state, body
        self.expand_inline: Callable[[Any, ast.Call], Any] | None = None

    def call(self, node: ast.Call) -> Any:
        """A call in a DSL body: a construct, another DSL function, an `@pl.inline` helper or a
        `pl.*` wrapper / parse-time Python callable."""
        fn = self.exprs.eval(node.func)
        if fn is constructs.submit or fn is constructs.spmd_submit:
            return self.submit(node, spmd=fn is constructs.spmd_submit)
        if isinstance(fn, FunctionRef) or isinstance(fn, Function):
            sig = fn.sig if isinstance(fn, FunctionRef) else self.external(fn, node)
            args, no_dep = self.call_args(node)
            allowed = {"dump_vars", "arg_directions", "attrs", "device"}
            kwargs = self.call_kwargs(node, allowed, f"{sig.name}()")
            if no_dep:
                kwargs["no_dep_args"] = no_dep
            return wrap(self.function_call(sig, args, node, kwargs))
        inline = getattr(fn, "pl_inline", None)
        if inline is not None and self.expand_inline is not None:
            return self.expand_inline(fn, node)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.source.error(
                    UnsupportedConstructError, "`*args` in a DSL call is not supported", a
                )
            args.append(self.exprs.eval(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.source.error(
                    UnsupportedConstructError, "`**kwargs` in a DSL call is not supported", kw.value
                )
            kwargs[kw.arg] = self.exprs.eval(kw.value)
        return self.call_python(fn, args, kwargs, node)

    def call_python(self, fn: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        if getattr(fn, "pl_executes_python", False):
            raise self.source.error(
                UnsupportedConstructError,
                f"{ast.unparse(node.func)} executes Python source, which a DSL body never does: "
                "the body is only parsed",
                node,
                hint="parse the text outside the DSL function and refer to the result by name",
            )
        if not _callable_at_parse_time(fn):
            raise self.source.error(
                UnsupportedConstructError,
                f"calling {ast.unparse(node.func)} (a Python "
                "function) inside a DSL function is not supported",
                node,
                hint="DSL bodies may call pl.* ops, other DSL functions and @pl.inline helpers",
            )
        self.state.span = self.source.span(node)
        try:
            return fn(*args, **kwargs)
        except ParserError as e:
            raise self.source.locate(e, node) from None
        except (TypeError, ValueError) as e:
            if raised_by_plang(e) and not isinstance(e, (OpTypeError, OpValueError)):
                raise
            raise self.source.error(ParserTypeError, f"{ast.unparse(node.func)}: {e}", node) from None

    def call_args(self, node: ast.Call, skip: int = 0) -> tuple[list[Any], tuple[int, ...]]:
        """Positional args of a kernel call; `pl.no_dep(x)` wrappers give their positions."""
        args, no_dep = [], []
        for i, a in enumerate(node.args[skip:]):
            if isinstance(a, ast.Call) and self.exprs.eval(a.func) is constructs.no_dep:
                if len(a.args) != 1 or a.keywords:
                    raise self.source.error(ParserSyntaxError, "pl.no_dep takes exactly one tensor", a)
                no_dep.append(i)
                a = a.args[0]
            args.append(self.exprs.eval(a))
        return args, tuple(no_dep)

    def call_kwargs(self, node: ast.Call, allowed: set[str], what: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg not in allowed:
                raise self.source.error(
                    ParserSyntaxError,
                    f"{what} got an unexpected keyword {kw.arg!r}",
                    kw.value,
                    hint=f"allowed keywords: {', '.join(sorted(allowed))}",
                )
            out[kw.arg] = self.scope_attr_value(kw.arg, self.exprs.eval(kw.value), kw.value)
        return out

    def external(self, fn: Function, node: ast.AST) -> Signature:
        """The signature of a module-level `@pl.function` called by name, which joins the
        calling program (a program defining a function of the same name, or two distinct
        functions of one name, are ambiguous)."""
        seen, _ = self.body.external_callees.setdefault(fn.name, (fn, node))
        if seen is not fn:
            raise self.source.error(
                ParserSyntaxError, f"two different external functions are named {fn.name!r}", node
            )
        return signature_of(fn)

    def function_call(
        self,
        sig: Signature,
        args: list[Any],
        node: ast.AST,
        kwargs: dict[str, Any],
        result: Type | None = None,
    ) -> Call:
        if len(args) != len(sig.params):
            raise self.source.error(
                ParserTypeError,
                f"{sig.name}() takes {len(sig.params)} arguments "
                f"({', '.join(p.name for p in sig.params)}), got {len(args)}",
                node,
            )
        exprs = []
        for p, a in zip(sig.params, args):
            exprs.append(self.argument(sig.name, p, a, node))
        dims = self.bind_dims(sig, exprs, node)
        tagged = tuple(v for v in self.body.dump_tags if any(e is v for e in exprs))
        if tagged and "dump_vars" not in kwargs:
            kwargs = {**kwargs, "dump_vars": tagged}
        return Call(
            GlobalVar(sig.name, self.source.span(node)),
            exprs,
            kwargs,
            result or _call_result_type(sig, dims),
            self.source.span(node),
        )

    def bind_dims(self, sig: Signature, args: list[Expr], node: ast.AST) -> dict[Var, Expr]:
        """The signature's dynamic dims bound to the arguments' dims. Each argument must have
        its parameter's rank and static dims, and each dynamic dim binds one extent (`M`
        cannot be 128 for one argument and 127 for another)."""
        dims: dict[Var, Expr] = {}
        where: dict[Var, str] = {}  # the argument a dynamic dim was first bound by
        for p, e in zip(sig.params, args):
            pt, at = p.type, e.type
            if not (isinstance(pt, ShapedType) and isinstance(at, ShapedType)):
                continue
            if pt.rank != at.rank or any(
                    dim_value(d) is not None and dim_value(a) is not None and dim_value(d) != dim_value(a)
                    for d, a in zip(pt.shape, at.shape)):
                raise self.source.error(ParserTypeError, f"argument {p.name!r} of {sig.name}() expects "
                                        f"{describe_type(pt)}, got {describe_type(at)}", node)
            for d, actual in zip(pt.shape, at.shape):
                if not isinstance(d, Var):
                    continue
                first = dims.setdefault(d, actual)
                where.setdefault(d, p.name)
                a, b = dim_value(first), dim_value(actual)
                if a is not None and b is not None and a != b:
                    raise self.source.error(
                        ParserTypeError, f"conflicting bindings for {d.name} in {sig.name}(): "
                        f"{a} from argument {where[d]!r}, {b} from argument {p.name!r}", node)
        return dims

    def argument(self, fname: str, param: Var, value: Any, node: ast.AST) -> Expr:
        pt = param.type
        hint_dtype = pt.dtype if isinstance(pt, ScalarType) else None
        e = value.unwrap() if isinstance(value, DSLValue) else literal(value, hint_dtype)
        if e is None:
            raise self.source.error(
                ParserTypeError,
                f"argument {param.name!r} of {fname}() must be a DSL value, "
                f"got {describe_value(value)}",
                node,
            )
        at = e.type
        bad = type(at) is not type(pt) or (
            isinstance(pt, (ShapedType, ScalarType))
            and at.dtype is not pt.dtype
            and not (isinstance(pt, ScalarType) and _int_like(at.dtype) and _int_like(pt.dtype))
        )
        if bad:
            raise self.source.error(
                ParserTypeError,
                f"argument {param.name!r} of {fname}() expects {describe_type(pt)}, got {describe_type(at)}",
                node,
            )
        if isinstance(pt, ScalarType) and at.dtype is not pt.dtype:  # implicit integer/flag conversion
            return Cast(e, pt.dtype, e.span)
        return e

    def submit(self, node: ast.Call, spmd: bool) -> Any:
        what = "pl.spmd_submit" if spmd else "pl.submit"
        if not node.args:
            raise self.source.error(
                ParserSyntaxError, f"{what} needs the kernel first: {what}(self.kernel, args...)", node
            )
        target = self.exprs.eval(node.args[0])
        if not isinstance(target, (FunctionRef, Function)):
            raise self.source.error(
                ParserTypeError,
                f"{what}: the first argument must be a DSL function such as self.kernel",
                node.args[0],
            )
        sig = target.sig if isinstance(target, FunctionRef) else self.external(target, node.args[0])
        args, no_dep = self.call_args(node, skip=1)
        allowed = {"deps", "allow_early_resolve", "predicate", "dumps", "dump_vars", "arg_directions",
                   "attrs"} | (
            {"core_num", "sync_start"} if spmd else set()
        )
        kwargs = {"spmd_submit" if spmd else "submit": True, **self.call_kwargs(node, allowed, what)}
        if spmd and "core_num" not in kwargs:
            raise self.source.error(ParserSyntaxError, "pl.spmd_submit needs core_num=<n>", node)
        for flag in ("allow_early_resolve", "sync_start"):
            if kwargs.get(flag) is False:
                del kwargs[flag]
        if no_dep:
            kwargs["no_dep_args"] = no_dep
        passed = [a.unwrap() if isinstance(a, DSLValue) else a for a in args]
        stray = next((d for d in kwargs.get("dumps", ()) if not any(d is a for a in passed)), None)
        if stray is not None:
            raise self.source.error(ParserTypeError, f"dumps= entry {stray.name!r} is not an argument "
                                    f"of this {what}", node, hint="dump a tensor the call passes the kernel")
        if "predicate" in kwargs:
            self.check_predicate(kwargs["predicate"], kwargs.get("deps", ()), node)
        result = TupleType([sig.result_type, ScalarType(TASK_ID)])
        return wrap(self.function_call(sig, args, node, kwargs, result))

    def check_predicate(self, predicate: Expr, deps: tuple, node: ast.Call) -> None:
        where = next(kw.value for kw in node.keywords if kw.arg == "predicate")
        problem = predicate_shape_error(predicate)
        if problem is not None:
            raise self.source.error(
                ParserTypeError,
                problem,
                where,
                hint="reduce a richer condition to one gate value in a prior kernel",
            )
        producer = unlisted_producer(predicate, deps, self.body.blocks)
        if producer is not None:
            tensor = predicate.lhs.args[0].name
            raise self.source.error(
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
                raise self.source.error(
                    ParserTypeError, "cache_policies= takes [[tensor, policy], ...]", node
                )
            return tuple((self.exprs.as_expr(t, node), p) for t, p in pairs)
        if key in ("deps", "no_dep_args", "dumps", "dump_vars"):
            if not isinstance(value, (list, tuple)):
                raise self.source.error(
                    ParserTypeError, f"{key}= takes a list, got {type(value).__name__}", node
                )
            items = tuple(None if v is None else self.exprs.as_expr(v, node) for v in value)
            if key == "dumps":
                for e in items:
                    if not (isinstance(e, Var) and isinstance(e.type, TensorType)):
                        shown = "None" if e is None else describe_type(e.type)
                        raise self.source.error(ParserTypeError, f"dumps= entry {shown} is not a "
                                                "tensor variable", node, hint="dumps=[a, b] lists tensors")
            return items
        if key == "arg_directions":
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, ParamDirection) for v in value):
                raise self.source.error(
                    ParserTypeError, "arg_directions= takes a list of pl.ParamDirection", node
                )
            return tuple(value)
        if key == "attrs":  # call metadata of the reference (`pl.adir` directions, launch attrs)
            if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                raise self.source.error(ParserTypeError, "attrs= takes a dict with string keys", node)
            return {k: self._attr_item(v, node) for k, v in value.items()}
        if key == "device":  # the device an orchestrator dispatch runs on
            return self.exprs.as_expr(value, node)
        if key == "predicate":
            e = self.exprs.as_expr(value, node)
            if not (isinstance(e.type, ScalarType) and e.type.dtype.is_bool):
                raise self.source.error(
                    ParserTypeError, "predicate= must be a comparison such as (t[0, 0] > 0)", node
                )
            return e
        if key == "core_num":
            if isinstance(value, bool) or not isinstance(value, (int, DSLValue)):
                raise self.source.error(ParserTypeError, f"core_num must be an integer, got {value!r}", node)
            if isinstance(value, int) and value <= 0:
                raise self.source.error(ParserSyntaxError, f"core_num must be positive, got {value}", node)
            return value if isinstance(value, int) else value.unwrap()
        if key in ("allow_early_resolve", "sync_start", "windowize") and not isinstance(value, bool):
            raise self.source.error(ParserTypeError, f"{key}= takes True or False, got {value!r}", node)
        return value

    def _attr_item(self, v: Any, node: ast.AST) -> Any:
        if isinstance(v, (list, tuple)):
            return tuple(self._attr_item(x, node) for x in v)
        return self.exprs.as_expr(v, node) if isinstance(v, DSLValue) else v


def _callable_at_parse_time(fn: Any) -> bool:
    if (
        fn in SAFE_BUILTINS.values()
        or isinstance(fn, (DataType, type))
        and (isinstance(fn, DataType) or issubclass(fn, (Enum, TypeSpec)))
    ):
        return True
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "") or ""
    return callable(fn) and module.startswith("plang") and module not in HOST_ONLY_MODULES


HOST_ONLY_MODULES = ("plang.pypto_core.logging",)
"""plang modules whose functions act on the host process (logging, checks): in a DSL body they
would run once, at parse time, so calling them there is refused."""


__all__ = ["CallParser", "FunctionRef", "ProgramSelf", "Signature", "signature_of"]
