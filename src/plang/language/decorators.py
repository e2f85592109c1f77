"""Entry points: `@pl.function`, `@pl.program`, `@pl.inline`, `pl.parse`, `pl.loads`."""

from __future__ import annotations

import ast
import builtins
import sys
import warnings
from pathlib import Path
from types import CodeType
from typing import Any, Callable

from ..errors import EagerCallError, ParserError, ParserSyntaxError
from ..ir.enums import FunctionType, Level, Role
from ..ir.function import Function, Program
from ..pyast import compile_ast
from .dispatch import ParseState
from .facade import facade
from .parser.body import Body
from .parser.expressions import ExprEvaluator
from .parser.functions import FunctionOptions, FunctionSource, parse_function
from .parser.functions import parse_program as parse_program_sources
from .parser.names import NameScopes
from .parser.source import Source, SourceTracker, source_of


def _closure_of(func: Any) -> dict[str, Any]:
    out = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            pass
    return out


def _encloses(outer: CodeType, code: CodeType) -> bool:
    return any(c is code or (isinstance(c, CodeType) and _encloses(c, code)) for c in outer.co_consts)


def _enclosing_locals(func: Any) -> dict[str, Any]:
    """Locals of the running function and class bodies that lexically enclose `func`,
    innermost first (module globals are reached through `__globals__`)."""
    out: dict[str, Any] = {}
    frame = sys._getframe(1)
    while frame is not None:
        if (
            frame.f_globals is func.__globals__
            and frame.f_code.co_name != "<module>"
            and _encloses(frame.f_code, func.__code__)
        ):
            for name, value in frame.f_locals.items():
                out.setdefault(name, value)
        frame = frame.f_back
    return out


def _live_source(func: Any, options: FunctionOptions, enclosing: dict[str, Any]) -> FunctionSource:
    src, node = source_of(func)
    if not isinstance(node, ast.FunctionDef):
        raise ParserSyntaxError(f"{func.__qualname__} is not a function definition")
    annotations = dict(getattr(func, "__annotations__", {}))
    return FunctionSource(node, src, func.__globals__, _closure_of(func), options, annotations, enclosing)


def _raise_clean(err: ParserError) -> None:
    """Re-raise a parser error without the parser's internal frames."""
    raise err.with_traceback(None) from None


def _is_method(func: Any, options: FunctionOptions) -> bool:
    """Defined in a class body: a `self` method, or a HOST-level function of a program
    (the reference's SubWorker callbacks take no `self`)."""
    parts = func.__qualname__.split(".")
    code = func.__code__
    in_class = len(parts) >= 2 and parts[-2] != "<locals>"
    takes_self = code.co_argcount > 0 and code.co_varnames[0] == "self"
    return in_class and (takes_self or options.level is Level.HOST)


class DeferredMethod:
    """A `@pl.function` method waiting for its `@pl.program` class to be parsed."""

    def __init__(self, func: Callable[..., Any], options: FunctionOptions, enclosing: dict[str, Any]) -> None:
        self.func, self.options, self.enclosing = func, options, enclosing
        self.__name__ = func.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise EagerCallError(f"{self.__name__} is a DSL method; decorate its class with @pl.program")


class FunctionDecorator:
    """`@pl.function(...)` with keywords: applied to the function it decorates."""

    def __init__(self, options: FunctionOptions) -> None:
        self.options = options

    def __call__(self, func: Callable[..., Any]) -> Function | DeferredMethod:
        enclosing = _enclosing_locals(func)
        if _is_method(func, self.options):
            return DeferredMethod(func, self.options, enclosing)
        try:
            return parse_function(_live_source(func, self.options, enclosing))
        except ParserError as e:
            _raise_clean(e)
            raise


def function(
    func: Callable[..., Any] | None = None,
    *,
    type: FunctionType = FunctionType.Opaque,
    level: Level | None = None,
    role: Role | None = None,
    attrs: dict[str, Any] | None = None,
    auto_scope: bool = True,
    strict_ssa: bool = False,
    external_source: str | Path | None = None,
) -> Any:
    """Parse a DSL function into an `ir.Function` (methods wait for `@pl.program`)."""
    attrs = {} if attrs is None else dict(attrs) if isinstance(attrs, dict) else attrs
    options = FunctionOptions(type, level, role, attrs, auto_scope, strict_ssa, external_source)
    deco = FunctionDecorator(options)
    return deco if func is None else deco(func)


class InlineFunction:
    """An `@pl.inline` helper: its AST is expanded at every DSL call site."""

    def __init__(
        self, func_def: ast.FunctionDef, source: Source, globals: dict[str, Any], closure: dict[str, Any]
    ) -> None:
        self.func_def, self.source, self.globals, self.closure = func_def, source, globals, closure
        self.name = func_def.name
        self.param_names = [a.arg for a in func_def.args.args]

    def pl_inline(self) -> InlineFunction:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise EagerCallError(f"@pl.inline {self.name} only works when called inside a DSL function")

    def __repr__(self) -> str:
        return f"<pl.inline {self.name}>"


def inline(func: Callable[..., Any]) -> InlineFunction:
    """Capture a helper whose body is expanded in place wherever a DSL function calls it."""
    try:
        src, node = source_of(func)
    except ParserError as e:
        _raise_clean(e)
        raise
    return InlineFunction(node, src, func.__globals__, _closure_of(func))  # type: ignore[arg-type]


class ProgramDecorator:
    def __init__(self, strict_ssa: bool) -> None:
        self.strict_ssa = strict_ssa

    def __call__(self, cls: type) -> Program:
        try:
            return self._parse(cls)
        except ParserError as e:
            _raise_clean(e)
            raise

    def _parse(self, cls: type) -> Program:
        sources = []
        for value in cls.__dict__.values():
            if isinstance(value, DeferredMethod):
                opts = value.options
                if self.strict_ssa and not opts.strict_ssa:
                    opts = FunctionOptions(**{**opts.__dict__, "strict_ssa": True})
                sources.append(_live_source(value.func, opts, value.enclosing))
        if not sources:
            raise ParserSyntaxError(f"@pl.program class {cls.__name__} has no @pl.function methods")
        src, node = source_of(cls)
        return parse_program_sources(cls.__name__, sources, src.span(node))


def program(cls: type | None = None, *, strict_ssa: bool = False) -> Any:
    """Parse a class of `@pl.function` methods into an `ir.Program` (`self` stripped)."""
    deco = ProgramDecorator(strict_ssa)
    return deco if cls is None else deco(cls)


# --- parsing source text -------------------------------------------------------------------


def _module_scope(src: Source, namespace: dict[str, Any]) -> ExprEvaluator:
    """An evaluator of a parsed module's decorator expressions against its namespace."""
    source = SourceTracker(src)
    return ExprEvaluator(source, NameScopes(source, namespace, {}), ParseState(), Body())


def _options_of(deco: Any) -> FunctionOptions | None:
    if deco is function:
        return FunctionOptions()
    return deco.options if isinstance(deco, FunctionDecorator) else None


def _module_items(code: str, filename: str, source_map: dict | None) -> list[Function | Program]:
    src = Source(code, filename, source_map=source_map)
    namespace: dict[str, Any] = {"pl": facade(), "__name__": "__plang_parse__", "__builtins__": builtins}
    scope = _module_scope(src, namespace)
    items: list[Function | Program] = []
    for stmt in src.tree.body:
        decos = [scope.eval(d) for d in getattr(stmt, "decorator_list", [])]
        if isinstance(stmt, ast.FunctionDef) and decos:
            if decos[0] is inline:
                namespace[stmt.name] = InlineFunction(stmt, src, namespace, {})
                continue
            opts = _options_of(decos[0])
            if opts is not None:
                fn = parse_function(FunctionSource(stmt, src, namespace, {}, opts))
                namespace[stmt.name] = fn
                items.append(fn)
                continue
        if (
            isinstance(stmt, ast.ClassDef)
            and decos
            and (decos[0] is program or isinstance(decos[0], ProgramDecorator))
        ):
            strict = isinstance(decos[0], ProgramDecorator) and decos[0].strict_ssa
            methods = []
            for m in stmt.body:
                if isinstance(m, ast.FunctionDef):
                    opts = _options_of(scope.eval(m.decorator_list[0])) if m.decorator_list else None
                    if opts is None:
                        raise scope.source.error(
                            ParserSyntaxError,
                            f"method {m.name!r} of a @pl.program class needs @pl.function",
                            m,
                        )
                    if strict:
                        opts = FunctionOptions(**{**opts.__dict__, "strict_ssa": True})
                    methods.append(FunctionSource(m, src, namespace, {}, opts))
            prog = parse_program_sources(stmt.name, methods, src.span(stmt))
            namespace[stmt.name] = prog
            items.append(prog)
            continue
        try:
            exec(compile_ast(ast.Module([stmt], []), filename, "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - user module code; report it at its line
            raise scope.source.error(
                ParserError, f"module-level statement failed: {type(e).__name__}: {e}", stmt
            ) from None
    return items


def _executes_python(fn: Callable) -> Callable:
    """Mark an entry point that executes Python source text: a DSL body may not call it."""
    fn.pl_executes_python = True  # type: ignore[attr-defined]
    return fn


@_executes_python
def parse(code: str, filename: str = "<string>", source_map: dict | None = None) -> Function | Program:
    """Parse DSL source text holding one `@pl.program` class or one `@pl.function`.

    Trusted input only: the text's module-level statements (imports, constants, helpers,
    decorator expressions) run as ordinary Python, with full builtins, to build the names the
    DSL bodies read. The DSL bodies themselves are only parsed, never run."""
    try:
        items = _module_items(code, filename, source_map)
    except ParserError as e:
        _raise_clean(e)
        raise
    programs = [i for i in items if isinstance(i, Program)]
    if len(programs) > 1 or (not programs and len(items) > 1):
        raise ValueError(
            f"{filename}: expected one @pl.program or one @pl.function, found "
            f"{', '.join(i.name for i in items)}"
        )
    if not items:
        raise ValueError(f"{filename}: no @pl.function or @pl.program to parse")
    return programs[0] if programs else items[0]


@_executes_python
def loads(filepath: str | Path) -> Function | Program:
    """Parse the DSL function or program in a file; like `parse`, this runs the file's
    module-level Python (trusted input only)."""
    path = Path(filepath)
    return parse(path.read_text(), str(path))


@_executes_python
def parse_program(code: str, filename: str = "<string>") -> Program:
    """Deprecated: use `pl.parse`."""
    warnings.warn("pl.parse_program is deprecated; use pl.parse", DeprecationWarning, stacklevel=2)
    return _require_program(parse(code, filename))


@_executes_python
def loads_program(filepath: str | Path) -> Program:
    """Deprecated: use `pl.loads`."""
    warnings.warn("pl.loads_program is deprecated; use pl.loads", DeprecationWarning, stacklevel=2)
    return _require_program(loads(filepath))


def _require_program(item: Function | Program) -> Program:
    if not isinstance(item, Program):
        raise ValueError(f"expected a @pl.program, found the function {item.name!r}")
    return item
