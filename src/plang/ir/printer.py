"""`python_print`: IR as DSL source, in the format fixed by `docs/ir-text-format.md`.

One pass over the tree writes lines into a list. Distinct Vars sharing a name within a
function get suffixes (`x`, `x_1`, ...); Vars a function uses but never binds (dynamic
dims) become `NAME = pl.dynamic("NAME")` lines at module top.
"""

from __future__ import annotations

import keyword
import math
import re
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..dtypes import FP32, INDEX, DataType
from .enums import ForKind, FunctionType, Level, ParamDirection, ScopeKind, ScopeMode, SplitMode
from .expr import (
    BINARY_OPS,
    Add,
    And,
    Call,
    Cast,
    ConstBool,
    ConstFloat,
    ConstInt,
    Div,
    Eq,
    Expr,
    FloorDiv,
    FloorMod,
    Ge,
    GlobalVar,
    Gt,
    IterArg,
    Le,
    Lt,
    MakeTuple,
    Max,
    Min,
    Mul,
    Ne,
    Neg,
    Not,
    Or,
    Pow,
    Sub,
    TupleGetItem,
    Var,
)
from .function import Function, Program
from .node import Node, register_printer
from .print_prefix import check_prefix, with_prefix
from .printer_types import PLD_IMPORT, TypePrinter
from .stmt import (
    Assign,
    Break,
    Continue,
    Eval,
    For,
    If,
    InlineStmt,
    Return,
    Scope,
    SeqStmts,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    flatten,
)
from .types import MemRef, TensorView, TileView, Type, UnknownType

if TYPE_CHECKING:
    from .ops.registry import Op

# Python operator precedences (higher binds tighter).
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _POW, _ATOM = range(1, 10)
_BIN_PREC: dict[type, int] = {
    Or: _OR, And: _AND, Eq: _CMP, Ne: _CMP, Lt: _CMP, Le: _CMP, Gt: _CMP, Ge: _CMP,
    Add: _ADD, Sub: _ADD, Mul: _MUL, Div: _MUL, FloorDiv: _MUL, FloorMod: _MUL, Pow: _POW,
}
_LITERALS = (ConstInt, ConstFloat, ConstBool)
_DIRECTION_WRAPPERS = {ParamDirection.Out: "pl.Out", ParamDirection.InOut: "pl.InOut"}
_LOOP_HEADS = {ForKind.Sequential: "pl.range", ForKind.Parallel: "pl.parallel",
               ForKind.Unroll: "pl.unroll", ForKind.Pipeline: "pl.pipeline"}
_DECORATOR_FLAGS = (("auto_scope", True), ("strict_ssa", False))  # (attr key, default)
_INDENT = "    "
_REGION_MODE_OPS = ("aiv_shard", "aic_gather")  # their `mode` is the enclosing split_aiv region's
_NOT_IDENT = re.compile(r"\W")


def python_print(node: Node, prefix: str = "pl", concise: bool = False, format: bool = True,
                 explicit_layout: bool = False) -> str:
    """DSL source for any IR node: a module for a Program or Function, source lines for a
    statement, the expression for an Expr and the annotation for a Type.

    `prefix` is the name plang is imported as; `concise` drops the annotations of assignments
    and yields (signatures keep theirs). `format` and `explicit_layout` are the reference's;
    plang prints one layout, which spells out every tile's memory space and view."""
    return with_prefix(_print(node, check_prefix(prefix), concise), prefix)


def _print(node: Node, prefix: str, concise: bool) -> str:
    if isinstance(node, (Program, Function)):
        return _Printer(isinstance(node, Program), prefix, concise).module(node)
    p = _Printer(False, prefix, concise)
    if isinstance(node, Stmt):
        p.stmt(node)
        return "\n".join(p.lines)
    if isinstance(node, Expr):
        return p.expr(node)
    if isinstance(node, Type):
        return p.type(node)
    if isinstance(node, (MemRef, TensorView, TileView)):
        return p.placement(node)
    raise TypeError(f"python_print: cannot print {type(node).__name__}")


def format_value(v: Any) -> str:
    """An attribute value as source (dtypes, enums, numbers, strings, sequences; no Exprs)."""
    return _Printer(False).value(v)


def _format_float(v: float) -> str:
    return repr(v) if math.isfinite(v) else f'float("{v}")'


class _Namer:
    """Unique printable names for Vars within one scope (a function or the module)."""

    __slots__ = ("names", "taken")

    def __init__(self, taken: set[str]) -> None:
        self.names: dict[Var, str] = {}
        self.taken = taken

    def fresh(self, var: Var, also_avoid: set[str]) -> str:
        base = _NOT_IDENT.sub("_", var.name) or "v"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = "v_" + base
        name, k = base, 0
        while name in self.taken or name in also_avoid:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        self.names[var] = name
        return name


class _Printer(TypePrinter):
    def __init__(self, in_program: bool, prefix: str = "pl", concise: bool = False) -> None:
        self.lines: list[str] = []
        self.indent = ""
        self.in_program = in_program
        self.concise = concise
        self.module_names = _Namer({"pl", prefix, "self"})
        self.dyn_vars: list[Var] = []  # free Vars, in order of first use
        self.local = _Namer(set(self.module_names.taken))
        self.in_function = False
        self.yield_targets: list[tuple[Var, ...]] = []
        self.split_modes: list[SplitMode] = []  # modes of the enclosing split_aiv regions

    # ---------------------------------------------------------------- module level

    def module(self, node: Program | Function) -> str:
        if isinstance(node, Program):
            self.line("@pl.program")
            self.line(f"class {node.name}:")
            self.indent = _INDENT
            for i, fn in enumerate(node.functions.values()):
                if i:
                    self.lines.append("")
                self.function(fn)
        else:
            self.function(node)
        head = ["import plang as pl", *([PLD_IMPORT] if self.uses_pld else []), ""]
        for v in self.dyn_vars:
            name = self.module_names.names[v]
            head.append(f'{name} = pl.dynamic("{name}")')
        head += ["", ""] if self.dyn_vars else [""]
        return "\n".join(head + self.lines) + "\n"

    def function(self, fn: Function) -> None:
        self.local = _Namer(set(self.module_names.taken))
        self.in_function = True
        self.line(self.decorator(fn))
        params = ["self"] if self.in_program else []
        names = [self.define(p) for p in fn.params]
        for name, p, d in zip(names, fn.params, fn.param_directions):
            t = self.type(p.type)
            wrap = _DIRECTION_WRAPPERS.get(d)
            params.append(f"{name}: {wrap}[{t}]" if wrap else f"{name}: {t}")
        rets = [self.type(t) for t in fn.return_types]
        ret = "" if not rets else f" -> {rets[0]}" if len(rets) == 1 else f" -> tuple[{', '.join(rets)}]"
        self.line(f"def {fn.name}({', '.join(params)}){ret}:")
        outer = self.indent
        self.indent += _INDENT
        expr_attrs = {k: v for k, v in fn.attrs.items() if _holds_expr(v)}
        if expr_attrs:
            self.line(f"pl.func_attr({self.value(expr_attrs)})")
        if "external_source" in fn.attrs and not flatten(fn.body):
            self.line("...")  # an external kernel's body is written elsewhere
        else:
            self.body(fn.body, allow_empty=bool(expr_attrs))
        self.indent = outer
        self.in_function = False

    def decorator(self, fn: Function) -> str:
        kw = []
        if fn.func_type is not FunctionType.Opaque:
            kw.append(f"type={self.value(fn.func_type)}")
        if fn.level is not None:
            kw.append(f"level={self.value(fn.level)}")
        if fn.role is not None:
            kw.append(f"role={self.value(fn.role)}")
        flags = dict(_DECORATOR_FLAGS)
        plain = {k: v for k, v in fn.attrs.items()
                 if k not in flags and k != "external_source" and not _holds_expr(v)}
        if plain:
            kw.append(f"attrs={self.value(plain)}")
        for key, default in _DECORATOR_FLAGS:
            if fn.attrs.get(key, default) != default:
                kw.append(f"{key}={self.value(fn.attrs[key])}")
        if "external_source" in fn.attrs:
            kw.append(f"external_source={self.value(fn.attrs['external_source'])}")
        return f"@pl.function({', '.join(kw)})" if kw else "@pl.function"

    # ---------------------------------------------------------------- names

    def define(self, var: Var) -> str:
        """The name of `var` at a binding site (a rebinding keeps the name)."""
        name = self.local.names.get(var)
        return name if name is not None else self.local.fresh(var, self.module_names.taken)

    def use(self, var: Var) -> str:
        name = self.local.names.get(var)
        if name is not None:
            return name
        if not self.in_function:
            return self.local.fresh(var, set())
        name = self.module_names.names.get(var)
        if name is None:  # used but never bound in this function: a dynamic dim
            name = self.module_names.fresh(var, self.local.taken)
            self.dyn_vars.append(var)
        return name

    # ---------------------------------------------------------------- types

    # ---------------------------------------------------------------- expressions

    def expr(self, e: Expr) -> str:
        return self._EXPR[type(e)](self, e)[0]

    def expr_p(self, e: Expr) -> tuple[str, int]:
        return self._EXPR[type(e)](self, e)

    def _var(self, e: Var) -> tuple[str, int]:
        return self.use(e), _ATOM

    def _global_var(self, e: GlobalVar) -> tuple[str, int]:
        return ("self." if self.in_program else "") + e.name, _ATOM

    def _const_int(self, e: ConstInt) -> tuple[str, int]:
        if e.type.dtype is not INDEX:
            return f"pl.const({e.value}, {_dtype(e.type.dtype)})", _ATOM
        return str(e.value), _UNARY if e.value < 0 else _ATOM

    def _const_float(self, e: ConstFloat) -> tuple[str, int]:
        if e.type.dtype is not FP32:
            return f"pl.const({_format_float(e.value)}, {_dtype(e.type.dtype)})", _ATOM
        return _bare_float(e.value)

    def _const_bool(self, e: ConstBool) -> tuple[str, int]:
        return ("True" if e.value else "False"), _ATOM

    def _operand(self, e: Expr, other: Expr) -> tuple[str, int]:
        """An operand of a binary expr: a literal prints bare when the parser would give it
        back its dtype from the other operand (see the format doc)."""
        cls = type(e)
        if (cls is ConstInt or cls is ConstFloat) and not isinstance(other, _LITERALS):
            d, od = e.type.dtype, getattr(other.type, "dtype", None)
            is_int = cls is ConstInt
            meets = od is not None and (od.is_int if is_int else od.is_float)
            if d is od or (not meets and d is (INDEX if is_int else FP32)):
                if is_int:
                    return str(e.value), _UNARY if e.value < 0 else _ATOM
                return _bare_float(e.value)
            text = str(e.value) if is_int else _format_float(e.value)
            return f"pl.const({text}, {_dtype(d)})", _ATOM
        return self._EXPR[cls](self, e)

    def _pinned(self, e: Expr) -> str:
        """A literal as `pl.const(v, dtype)`, which the parser keeps as an IR constant."""
        if type(e) is ConstInt:
            return f"pl.const({e.value}, {_dtype(e.type.dtype)})"
        if type(e) is ConstFloat:
            return f"pl.const({_format_float(e.value)}, {_dtype(e.type.dtype)})"
        return self.expr(e)

    def _binary(self, e) -> tuple[str, int]:
        if isinstance(e.lhs, _LITERALS) and isinstance(e.rhs, _LITERALS) and type(e) not in (Min, Max):
            ls, lp = self._pinned(e.lhs), _ATOM  # bare literals on both sides would fold on parse
        else:
            ls, lp = self._operand(e.lhs, e.rhs)
        rs, rp = self._operand(e.rhs, e.lhs)
        cls = type(e)
        if cls is Min or cls is Max:
            return f"pl.{e.symbol}({ls}, {rs})", _ATOM
        p = _BIN_PREC[cls]
        if p == _CMP:
            lpar, rpar = lp <= p, rp <= p
        elif p == _POW:
            lpar, rpar = lp <= p, rp < _UNARY
        else:
            lpar, rpar = lp < p, rp <= p
        if lpar:
            ls = f"({ls})"
        if rpar:
            rs = f"({rs})"
        return f"{ls} {e.symbol} {rs}", p

    def _neg(self, e: Neg) -> tuple[str, int]:
        s, p = self.expr_p(e.operand)
        return (f"-({s})" if p <= _UNARY else f"-{s}"), _UNARY

    def _not(self, e: Not) -> tuple[str, int]:
        s, p = self.expr_p(e.operand)
        return (f"not ({s})" if p < _NOT else f"not {s}"), _NOT

    def _cast(self, e: Cast) -> tuple[str, int]:
        return f"pl.cast({self.expr(e.operand)}, {_dtype(e.type.dtype)})", _ATOM

    def _make_tuple(self, e: MakeTuple) -> tuple[str, int]:
        items = [self.expr(x) for x in e.elements]
        return ("(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"), _ATOM

    def _tuple_get_item(self, e: TupleGetItem) -> tuple[str, int]:
        s, p = self.expr_p(e.tuple)
        return (f"({s})" if p < _ATOM else s) + f"[{e.index}]", _ATOM

    def _call(self, e: Call) -> tuple[str, int]:
        kwargs = dict(e.kwargs)
        no_dep = set(kwargs.pop("no_dep_args", ()))
        args = [f"pl.no_dep({self.arg(a)})" if i in no_dep else self.arg(a) for i, a in enumerate(e.args)]
        op = e.op
        if isinstance(op, GlobalVar):
            callee = self._global_var(op)[0]
            for flag in ("submit", "spmd_submit"):
                if kwargs.get(flag) is True:
                    del kwargs[flag]
                    args.insert(0, callee)
                    callee = f"pl.{flag}"
                    break
        else:
            callee = op.spelling
            self.uses_pld = self.uses_pld or callee.startswith("pld.")
            if op.short_name in _REGION_MODE_OPS:
                mode = kwargs.pop("mode", SplitMode.NONE)
                if not self.split_modes:  # the outlined form of a lowered kernel
                    kwargs = {"split": mode.value, **kwargs}
                elif mode is not self.split_modes[-1]:
                    kwargs["mode"] = mode  # (rejected on parse) else inherited from the region
            args = self._op_args(op, args, kwargs)
        args += [f"{k}={self.value(v)}" for k, v in kwargs.items()]
        return f"{callee}({', '.join(args)})", _ATOM

    def _op_args(self, op: Op, positional: list[str], kwargs: dict[str, Any]) -> list[str]:
        """An op call's arguments in parameter order: positional until the first parameter
        that is an attribute or optional, keywords from there on (so the call re-binds the
        same way); consumes the op's parameters from `kwargs`."""
        out: list[str] = []
        rest = iter(positional)
        by_keyword = False
        for p in op.params:
            if p.is_expr and p.required:
                text = next(rest)
                out.append(f"{p.name}={text}" if by_keyword else text)
                continue
            by_keyword = True
            if p.name in kwargs:
                out.append(f"{p.name}={self.value(kwargs.pop(p.name))}")
        return out + list(rest)

    def arg(self, a: Expr) -> str:
        """A call argument: a `MakeTuple` prints as a list."""
        if type(a) is MakeTuple:
            return "[" + ", ".join(self.arg(x) for x in a.elements) + "]"
        return self.expr(a)

    def value(self, v: Any) -> str:
        """An attribute / kwarg value: Exprs, dtypes, enums, numbers, strings, sequences."""
        if isinstance(v, Expr):
            return self.arg(v)
        if isinstance(v, Enum):
            return self.enum(v)
        if v is None or isinstance(v, (bool, int, str)):
            return repr(v)
        if isinstance(v, float):
            return _format_float(v)
        if isinstance(v, DataType):
            return _dtype(v)
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, Mapping):
            return "{" + ", ".join(f"{k!r}: {self.value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, Type):
            return self.type(v)
        return repr(v)

    _EXPR: dict[type, Callable[[_Printer, Any], tuple[str, int]]] = {}

    # ---------------------------------------------------------------- statements

    def line(self, text: str) -> None:
        self.lines.append(self.indent + text)

    def body(self, stmt: Stmt | None, allow_empty: bool = False) -> None:
        stmts = flatten(stmt)
        if not stmts and not allow_empty:
            self.line("pass")
        for s in stmts:
            self._STMT[type(s)](self, s)

    def block(self, header: str, stmt: Stmt | None, targets: tuple[Var, ...] | None = None,
              first: str | None = None) -> None:
        """`header:` then the indented body; `targets` bind the body's `pl.yield_`."""
        self.line(header + ":")
        outer = self.indent
        self.indent += _INDENT
        if first is not None:
            self.line(first)
        if targets is not None:
            self.yield_targets.append(targets)
        self.body(stmt, allow_empty=first is not None)
        if targets is not None:
            self.yield_targets.pop()
        self.indent = outer

    def stmt(self, s: Stmt) -> None:
        self.body(s, allow_empty=True)

    def _assign(self, s: Assign) -> None:
        value = self.expr(s.value)
        name = self.define(s.var)
        if self.concise or isinstance(s.var.type, UnknownType):
            self.line(f"{name} = {value}")
        else:
            self.line(f"{name}: {self.type(s.var.type)} = {value}")

    def _eval(self, s: Eval) -> None:
        self.line(self.expr(s.expr))

    def _return(self, s: Return) -> None:
        self.line("return " + ", ".join(self.expr(v) for v in s.values) if s.values else "return")

    def _yield(self, s: Yield) -> None:
        call = f"pl.yield_({', '.join(self.expr(v) for v in s.values)})"
        targets = self.yield_targets[-1] if self.yield_targets else ()
        if len(targets) == 1:
            var = targets[0]
            name = self.define(var)
            ann = "" if self.concise or isinstance(var.type, UnknownType) else f": {self.type(var.type)}"
            self.line(f"{name}{ann} = {call}")
        elif targets:
            self.line(", ".join(self.define(v) for v in targets) + " = " + call)
        else:
            self.line(call)

    def _break(self, s: Break) -> None:
        self.line("break")

    def _continue(self, s: Continue) -> None:
        self.line("continue")

    def _inline(self, s: InlineStmt) -> None:
        for text in s.body.splitlines():
            self.line(text)

    def _if(self, s: If) -> None:
        self.block(f"if {self.expr(s.cond)}", s.then_body, s.return_vars)
        if flatten(s.else_body):
            self.block("else", s.else_body, s.return_vars)

    def _for(self, s: For) -> None:
        start, stop, step = s.start, s.stop, s.step
        if _is_int(start, 0) and _is_int(step, 1):
            args = [self.expr(stop)]
        else:
            args = [self.expr(start), self.expr(stop), self.expr(step)]
        target = self.define(s.loop_var)
        if "stage" in s.attrs:
            args.append(f"stage={self.value(s.attrs['stage'])}")
        if s.iter_args:
            args.append(f"init_values={self._inits(s.iter_args)}")
            target += f", {self._iter_targets(s.iter_args)}"
        extra = {k: v for k, v in s.attrs.items() if k != "stage"}
        if extra:
            args.append("attrs={" + ", ".join(f'"{k}": {self.value(v)}' for k, v in extra.items()) + "}")
        self.block(f"for {target} in {_LOOP_HEADS[s.kind]}({', '.join(args)})", s.body, s.return_vars)

    def _while(self, s: While) -> None:
        if not s.iter_args:  # a natural `while` (not yet in SSA form)
            return self.block(f"while {self.expr(s.cond)}", s.body)
        inits = self._inits(s.iter_args)
        targets = self._iter_targets(s.iter_args)
        self.block(f"for {targets} in pl.while_(init_values={inits})", s.body, s.return_vars,
                   first=f"pl.cond({self.expr(s.cond)})")

    def _inits(self, iter_args: tuple[IterArg, ...]) -> str:
        inits = [self.expr(a.init) for a in iter_args]
        return "(" + inits[0] + ",)" if len(inits) == 1 else "(" + ", ".join(inits) + ")"

    def _iter_targets(self, iter_args: tuple[IterArg, ...]) -> str:
        names = [self.define(a) for a in iter_args]
        return "(" + names[0] + ",)" if len(names) == 1 else "(" + ", ".join(names) + ")"

    def _scope(self, s: Scope) -> None:
        attrs = dict(s.attrs)
        kind = s.kind
        args: list[str] = []
        if kind is ScopeKind.InCore or kind is ScopeKind.Hierarchy:
            head = "pl.at"
            default_level = Level.CORE_GROUP if kind is ScopeKind.InCore else Level.HOST
            args.append(f"level={self.value(attrs.pop('level', default_level))}")
            if "role" in attrs:
                args.append(f"role={self.value(attrs.pop('role'))}")
        elif kind is ScopeKind.Cluster:
            head = "pl.cluster"
        elif kind is ScopeKind.Spmd:
            head = "pl.spmd"
            args.append(self.value(attrs.pop("core_num")))
        elif kind is ScopeKind.Runtime:
            head = "pl.manual_scope" if attrs.pop("mode", ScopeMode.AUTO) is ScopeMode.MANUAL else "pl.scope"
        elif kind is ScopeKind.Fused:
            head = "pl.fused"
        else:
            head = "pl.graph"
            args.append(self.value(attrs.pop("name")))
        optimizations = []
        if "split" in attrs:
            optimizations.append(f"pl.split({self.value(attrs.pop('split'))})")
        if "slot_num" in attrs:
            optimizations.append(f"pl.cross_core_slot(slot_num={self.value(attrs.pop('slot_num'))})")
        if optimizations:
            args.append(f"optimizations=[{', '.join(optimizations)}]")
        args += [f"{k}={self.value(v)}" for k, v in attrs.items()]
        call = f"{head}({', '.join(args)})"
        if s.index_var is not None:
            header = f"for {self.define(s.index_var)} in {call}"
        else:
            header = f"with {call}"
            if s.task_var is not None:
                header += f" as {self.define(s.task_var)}"
        self.block(header, s.body)

    def _split_aiv(self, s: SplitAivScope) -> None:
        mode = self.value(s.mode)
        self.split_modes.append(s.mode)
        self.block(f"for {self.define(s.lane_var)} in pl.split_aiv(2, mode={mode})", s.body)
        self.split_modes.pop()

    def _seq(self, s: SeqStmts) -> None:
        self.body(s, allow_empty=True)

    _STMT: dict[type, Callable[[_Printer, Any], None]] = {
        Assign: _assign, Eval: _eval, Return: _return, Yield: _yield, Break: _break,
        Continue: _continue, If: _if, For: _for, While: _while, Scope: _scope,
        SplitAivScope: _split_aiv, SeqStmts: _seq, InlineStmt: _inline,
    }


_Printer._EXPR.update({
    Var: _Printer._var, IterArg: _Printer._var, GlobalVar: _Printer._global_var,
    ConstInt: _Printer._const_int, ConstFloat: _Printer._const_float,
    ConstBool: _Printer._const_bool, Neg: _Printer._neg, Not: _Printer._not, Cast: _Printer._cast,
    Call: _Printer._call, MakeTuple: _Printer._make_tuple, TupleGetItem: _Printer._tuple_get_item,
    **{cls: _Printer._binary for cls in BINARY_OPS},
})


def _dtype(d: DataType) -> str:
    return "pl." + d.name


def _bare_float(v: float) -> tuple[str, int]:
    return _format_float(v), _UNARY if v < 0 else _ATOM


def _is_int(e: Expr, value: int) -> bool:
    return type(e) is ConstInt and e.value == value and e.type.dtype is INDEX


def _holds_expr(v: Any) -> bool:
    return isinstance(v, Expr) or (isinstance(v, (tuple, list)) and any(_holds_expr(x) for x in v))


register_printer(python_print)
