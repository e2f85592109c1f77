"""Whole functions and programs: signatures first, then bodies."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ParserSyntaxError, ParserTypeError, UnsupportedConstructError
from ...ir.enums import FunctionType, Level, Role
from ...ir.expr import Var
from ...ir.function import Function, Program
from ...ir.stmt import InlineStmt, seq
from ...ir.types import Type
from ..dispatch import ParseState, parsing
from .body import Body
from .calls import ProgramSelf, Signature
from .expressions import ExprEvaluator
from .names import NameScopes
from .returns import always_returns, close_returns
from .source import Source, SourceTracker
from .statements import StatementParser
from .types import TypeResolver


@dataclass(frozen=True)
class FunctionOptions:
    """The keywords of `@pl.function(...)`."""

    type: FunctionType = FunctionType.Opaque
    level: Level | None = None
    role: Role | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    auto_scope: bool = True
    strict_ssa: bool = False
    external_source: str | Path | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, FunctionType):
            raise ParserTypeError(f"@pl.function type= takes a pl.FunctionType, got {self.type!r}")
        if self.level is not None and not isinstance(self.level, Level):
            raise ParserTypeError(f"@pl.function level= takes a pl.Level, got {self.level!r}")
        if self.role is not None and not isinstance(self.role, Role):
            raise ParserTypeError(f"@pl.function role= takes a pl.Role, got {self.role!r}")
        if not isinstance(self.attrs, dict):
            raise ParserTypeError(f"@pl.function attrs= must be a dict, got {self.attrs!r}")
        bad = next((k for k in self.attrs if not isinstance(k, str)), None)
        if bad is not None:
            raise ParserTypeError(f"@pl.function attrs= keys must be strings, got {bad!r}")
        if self.external_source is not None and not isinstance(self.external_source, (str, Path)):
            raise ParserTypeError(
                f"@pl.function external_source= takes a file path, got {self.external_source!r}"
            )


@dataclass
class FunctionSource:
    """One function to parse: its def node, where it came from, and its name scopes."""

    fdef: ast.FunctionDef
    src: Source
    globals: dict[str, Any]
    closure: dict[str, Any]
    options: FunctionOptions
    annotations: dict[str, Any] | None = None  # evaluated annotations of a live function object
    # names of the scopes enclosing a live function, for signature annotations that PEP 563
    # (`from __future__ import annotations`) left as strings without closure cells
    annotation_scope: dict[str, Any] = field(default_factory=dict)


class FunctionParser:
    """Parses one function: owns its parse state, source tracker, name scopes, body state,
    expression evaluator, type resolver and statement parser, and wires them together."""

    def __init__(self, fs: FunctionSource, program: ProgramSelf | None) -> None:
        self.fs, self.program = fs, program
        opts = fs.options
        self.state = ParseState()
        self.state.in_core_function = opts.type.is_core
        self.source = SourceTracker(fs.src)
        self.names = NameScopes(self.source, fs.globals, fs.closure, opts.strict_ssa)
        self.body = Body(opts.type)
        self.exprs = ExprEvaluator(self.source, self.names, self.state, self.body)
        self.types = TypeResolver(self.exprs, fs.annotations, fs.annotation_scope)
        self.stmts = StatementParser(self.exprs, self.types, self.body)

    @property
    def declared_returns(self) -> list[Type] | None:
        return self.body.declared_returns

    # --- signature ------------------------------------------------------------------------
    def signature(self) -> Signature:
        fdef = self.fs.fdef
        a = fdef.args
        extra = a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs
        if extra:
            node = a.vararg or a.kwarg or (a.kwonlyargs or a.posonlyargs)[0]
            raise self.source.error(
                UnsupportedConstructError, "DSL functions take plain positional parameters only", node
            )
        if a.defaults:
            raise self.source.error(
                UnsupportedConstructError, "parameter defaults are not supported", a.defaults[0]
            )
        params = list(a.args)
        if self.program is not None and params and params[0].arg == "self":
            params = params[1:]  # a method may also omit `self`, as the reference allows
        with parsing(self.state):
            vars_, dirs = [], []
            for p in params:
                if p.annotation is None:
                    raise self.source.error(
                        ParserTypeError,
                        f"parameter {p.arg!r} needs a type annotation",
                        p,
                        hint="e.g. x: pl.Tensor[[64, 64], pl.FP32]",
                    )
                spec = self.types.parameter(p.arg, p.annotation)
                var = Var(p.arg, spec.type, self.source.span(p))
                self.names.set_value(p.arg, var)
                vars_.append(var)
                dirs.append(spec.direction)
            self.body.declared_returns = self.types.returns(fdef)
        return Signature(fdef.name, vars_, dirs, self.body.declared_returns or [])

    # --- body -----------------------------------------------------------------------------
    def parse(self, sig: Signature) -> Function:
        fdef, opts = self.fs.fdef, self.fs.options
        attrs = dict(opts.attrs)
        if opts.external_source is not None:
            self.check_external(fdef)
        elif self.body.declared_returns and not always_returns(fdef.body) and not _is_stub(fdef):
            raise self.source.error(
                ParserTypeError,
                f"{fdef.name}() declares {len(self.body.declared_returns)} return value(s) but does not "
                "return on every path", fdef, hint="end the function with a return statement",
            )
        if opts.level is Level.HOST and opts.role is Role.SubWorker and not _is_stub(fdef):
            # a HOST SubWorker's body is Python the run executes as it is (`torch` in scope)
            source = "\n".join(ast.unparse(s) for s in fdef.body)
            body = InlineStmt(source, "Python", self.source.span(fdef.body[0]))
        else:
            with parsing(self.state):
                self.body.open_block("function", None)
                for s in close_returns(fdef.body):
                    self.stmts.parse_stmt(s)
                body = seq(self.body.blocks.pop(), self.source.span(fdef.body[0]))
        for k, v in self.body.func_attrs.items():
            if k in attrs:
                raise self.source.error(
                    ParserSyntaxError,
                    f"function attribute {k!r} is given by both attrs= and pl.func_attr",
                    fdef,
                )
            attrs[k] = v
        if opts.role is Role.SubWorker and _is_stub(fdef):
            attrs["requires_runtime_binding"] = True
        if not opts.auto_scope:
            attrs["auto_scope"] = False
        if opts.strict_ssa:
            attrs["strict_ssa"] = True
        if opts.external_source is not None:
            attrs["external_source"] = self.external_path(opts.external_source, fdef)
        declared, seen = self.body.declared_returns, self.body.seen_returns
        returns = declared if declared is not None else (seen or [])
        return Function(
            fdef.name,
            sig.params,
            sig.directions,
            returns,
            body,
            opts.type,
            opts.level,
            opts.role,
            attrs,
            self.source.span(fdef),
        )

    def external_path(self, path: str | Path, fdef: ast.FunctionDef) -> str:
        """`external_source=` as a path: a relative one is resolved against the directory of the
        file defining the function (kept as written when the source has no real file)."""
        path = Path(path)
        origin = Path(self.source.span(fdef).filename)
        if not path.is_absolute() and origin.is_file():
            path = origin.resolve().parent / path
        return str(path)

    def check_external(self, fdef: ast.FunctionDef) -> None:
        if self.body.func_type not in (FunctionType.AIC, FunctionType.AIV):
            raise self.source.error(
                ParserSyntaxError, "external_source= is only valid on FunctionType.AIC / AIV functions", fdef
            )
        body = [
            s
            for s in fdef.body
            if not (
                isinstance(s, ast.Expr)
                and isinstance(s.value, ast.Constant)
                and isinstance(s.value.value, str)
            )
        ]
        if len(body) != 1 or not (isinstance(body[0], ast.Expr) and body[0].value.value is Ellipsis):  # type: ignore
            raise self.source.error(
                ParserSyntaxError,
                "a function with external_source= must have `...` as its body",
                fdef.body[0],
            )


def _is_stub(fdef: ast.FunctionDef) -> bool:
    """A body of only a docstring and `...`: a declaration, not a function that forgets to return."""
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
               and (s.value.value is Ellipsis or isinstance(s.value.value, str)) for s in fdef.body)


def parse_function(fs: FunctionSource) -> Function:
    p = FunctionParser(fs, None)
    return p.parse(p.signature())


def parse_program(name: str, functions: list[FunctionSource], span: Any = None) -> Program:
    """Parse every method's signature first (so `self.f(...)` resolves in any order), then the
    bodies, callees before callers so an unannotated callee's return types reach its calls."""
    signatures: dict[str, Signature] = {}
    this = ProgramSelf(name, signatures)
    parsers: dict[str, FunctionParser] = {}
    for fs in functions:
        p = FunctionParser(fs, this)
        if fs.fdef.name in signatures:
            raise p.source.error(
                ParserSyntaxError, f"program {name!r} defines {fs.fdef.name!r} twice", fs.fdef
            )
        signatures[fs.fdef.name] = p.signature()
        parsers[fs.fdef.name] = p
    parsed: dict[str, Function] = {}
    for fname in _callees_first(parsers):
        p = parsers[fname]
        p.names.set_value("self", this)
        fn = p.parse(signatures[fname])
        signatures[fname].return_types = list(fn.return_types)
        parsed[fname] = fn
    externals: dict[str, Function] = {}
    for fname, p in parsers.items():
        for ext_name, (ext, node) in p.body.external_callees.items():
            if ext_name in parsers or externals.setdefault(ext_name, ext) is not ext:
                raise p.source.error(
                    ParserSyntaxError,
                    f"external function {ext_name!r} clashes with another function of that name "
                    f"in program {name!r}",
                    node,
                    hint="rename one of them",
                )
    return Program(name, [parsed[f] for f in parsers] + list(externals.values()), span)


def _callees_first(parsers: dict[str, FunctionParser]) -> list[str]:
    """Function names ordered so that every unannotated callee precedes its callers.

    Only calls of functions without a `->` annotation constrain the order (their return
    types come from their bodies); a cycle through such functions cannot be typed."""
    inferred = {n for n, p in parsers.items() if p.declared_returns is None}
    calls: dict[str, list[tuple[str, ast.AST]]] = {}
    for n, p in parsers.items():
        calls[n] = [
            (node.attr, node)
            for node in ast.walk(p.fs.fdef)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr in inferred
        ]
    order: list[str] = []
    done: set[str] = set()
    path: list[str] = []

    def visit(n: str) -> None:
        path.append(n)
        for callee, node in calls[n]:
            if callee in path:
                cycle = " -> ".join([*path[path.index(callee) :], callee])
                raise parsers[n].source.error(
                    ParserTypeError,
                    f"cannot infer the return types of {callee!r}: it is called recursively ({cycle})",
                    node,
                    hint=f"annotate the return type of {callee!r} (def {callee}(...) -> ...)",
                )
            if callee not in done:
                visit(callee)
        path.pop()
        done.add(n)
        order.append(n)

    for n in parsers:
        if n not in done:
            visit(n)
    return order
