"""`IRBuilder`: build functions and programs in code (tests, passes) with context managers.

    b = IRBuilder()
    with b.function("f", type=FunctionType.InCore) as f:
        a = f.param("a", TensorType([64], FP32))
        t = b.let("t", make_call("tensor.add", [a, a]))
        with b.for_range("i", 0, 4, iter_args=[("acc", t)]) as loop:
            b.yield_(make_call("tensor.add", [loop.iter_args[0], a]))
        b.ret(loop.return_vars[0])
    fn = f.function
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from ..dtypes import INDEX, TASK_ID
from .enums import ForKind, FunctionType, Level, ParamDirection, Role, ScopeKind, SplitMode
from .expr import ConstInt, Expr, IterArg, Var
from .function import Function, Program
from .stmt import (
    Assign,
    Break,
    Continue,
    Eval,
    For,
    If,
    Return,
    Scope,
    SplitAivScope,
    Stmt,
    While,
    Yield,
    seq,
)
from .types import ScalarType, Type


def _index(v: int | Expr) -> Expr:
    return ConstInt(v, INDEX) if isinstance(v, int) else v


class ProgramFrame:
    """The program being built; `program` is set when its block closes."""

    program: Program | None = None


class ScopeFrame:
    """The Vars a scope binds (None when absent)."""

    def __init__(self, task_var: Var | None, index_var: Var | None) -> None:
        self.task_var, self.index_var = task_var, index_var


class FunctionFrame:
    """The function being built: declare parameters with `param`; `function` when done."""

    def __init__(self, name: str, kwargs: dict[str, Any]) -> None:
        self.name, self.kwargs = name, kwargs
        self.params: list[Var] = []
        self.directions: list[ParamDirection] = []
        self.function: Function | None = None

    def param(self, name: str, type: Type, direction: ParamDirection = ParamDirection.In) -> Var:
        v = Var(name, type)
        self.params.append(v)
        self.directions.append(direction)
        return v


class LoopFrame:
    """A loop being built: `var` (For only), `iter_args` for the body, `return_vars` after."""

    def __init__(self, var: Var | None, iter_args: list[IterArg], return_vars: list[Var]) -> None:
        self.var, self.iter_args, self.return_vars = var, iter_args, return_vars
        self.cond: Expr | None = None

    def set_cond(self, cond: Expr) -> None:
        """The `pl.while_` condition (over `iter_args`)."""
        self.cond = cond


class IfFrame:
    """An `if` being built: fill `then_()` and optionally `else_()`; `return_vars` after."""

    def __init__(self, builder: IRBuilder, return_vars: list[Var]) -> None:
        self.builder, self.return_vars = builder, return_vars
        self.then_body: Stmt | None = None
        self.else_body: Stmt | None = None

    @contextmanager
    def then_(self) -> Iterator[None]:
        with self.builder._block() as stmts:
            yield
        self.then_body = seq(stmts)

    @contextmanager
    def else_(self) -> Iterator[None]:
        with self.builder._block() as stmts:
            yield
        self.else_body = seq(stmts)


class IRBuilder:
    """Appends statements to the innermost open block."""

    def __init__(self) -> None:
        self._blocks: list[list[Stmt]] = []
        self._functions: list[Function] | None = None

    # -------------------------------------------------------------- containers

    @contextmanager
    def program(self, name: str) -> Iterator[ProgramFrame]:
        """Collects every function built inside into `frame.program`."""
        frame = ProgramFrame()
        self._functions = functions = []
        try:
            yield frame
        finally:
            self._functions = None
        frame.program = Program(name, functions)

    @contextmanager
    def function(self, name: str, type: FunctionType = FunctionType.Opaque,
                 return_types: Sequence[Type] | None = None, level: Level | None = None,
                 role: Role | None = None, attrs: Mapping[str, Any] | None = None) -> Iterator[FunctionFrame]:
        """A function; return types default to the types of the last `ret` values."""
        frame = FunctionFrame(name, dict(type=type, level=level, role=role, attrs=attrs))
        with self._block() as stmts:
            yield frame
        if return_types is None:
            last = stmts[-1] if stmts else None
            return_types = [v.type for v in last.values] if isinstance(last, Return) else []
        frame.function = Function(name, frame.params, frame.directions, return_types, seq(stmts),
                                  frame.kwargs["type"], frame.kwargs["level"], frame.kwargs["role"],
                                  frame.kwargs["attrs"])
        if self._functions is not None:
            self._functions.append(frame.function)

    @contextmanager
    def for_range(self, name: str, start: int | Expr, stop: int | Expr, step: int | Expr = 1,
                  iter_args: Sequence[tuple[str, Expr]] = (), kind: ForKind = ForKind.Sequential,
                  attrs: Mapping[str, Any] | None = None,
                  return_names: Sequence[str] | None = None) -> Iterator[LoopFrame]:
        """A counted loop; `iter_args` are `(name, init)` pairs; yield the next values."""
        frame = self._loop_frame(Var(name, ScalarType(INDEX)), iter_args, return_names)
        with self._block() as stmts:
            yield frame
        self.emit(For(frame.var, _index(start), _index(stop), _index(step), seq(stmts),
                      frame.iter_args, frame.return_vars, kind, attrs))

    @contextmanager
    def while_(self, iter_args: Sequence[tuple[str, Expr]],
               return_names: Sequence[str] | None = None) -> Iterator[LoopFrame]:
        """A `pl.while_` loop; call `frame.set_cond(...)` inside."""
        frame = self._loop_frame(None, iter_args, return_names)
        with self._block() as stmts:
            yield frame
        if frame.cond is None:
            raise ValueError("while_ loop built without a condition; call set_cond()")
        self.emit(While(frame.cond, frame.iter_args, seq(stmts), frame.return_vars))

    @contextmanager
    def if_(self, cond: Expr, returns: Sequence[tuple[str, Type]] = ()) -> Iterator[IfFrame]:
        frame = IfFrame(self, [Var(n, t) for n, t in returns])
        yield frame
        if frame.then_body is None:
            raise ValueError("if_ built without a then_() branch")
        self.emit(If(cond, frame.then_body, frame.else_body, frame.return_vars))

    @contextmanager
    def scope(self, kind: ScopeKind, attrs: Mapping[str, Any] | None = None,
              task_var: str | None = None, index_var: str | None = None) -> Iterator[ScopeFrame]:
        """A scope; `task_var` / `index_var` name the Vars it binds (TASK_ID / INDEX)."""
        frame = ScopeFrame(Var(task_var, ScalarType(TASK_ID)) if task_var else None,
                           Var(index_var, ScalarType(INDEX)) if index_var else None)
        with self._block() as stmts:
            yield frame
        self.emit(Scope(kind, seq(stmts), attrs, frame.task_var, frame.index_var))

    @contextmanager
    def split_aiv(self, mode: SplitMode, lane: str = "lane") -> Iterator[Var]:
        lane_var = Var(lane, ScalarType(INDEX))
        with self._block() as stmts:
            yield lane_var
        self.emit(SplitAivScope(mode, lane_var, seq(stmts)))

    # -------------------------------------------------------------- statements

    def emit(self, stmt: Stmt) -> Stmt:
        if not self._blocks:
            raise RuntimeError("IRBuilder: no open block; start with b.function(...)")
        self._blocks[-1].append(stmt)
        return stmt

    def let(self, name: str, value: Expr, type: Type | None = None) -> Var:
        """`name = value` with a fresh Var (typed like `value` unless `type` is given)."""
        var = Var(name, type or value.type)
        self.emit(Assign(var, value))
        return var

    def assign(self, var: Var, value: Expr) -> Var:
        """Rebind an existing Var (non-SSA)."""
        self.emit(Assign(var, value))
        return var

    def eval(self, expr: Expr) -> None:
        self.emit(Eval(expr))

    def yield_(self, *values: Expr) -> None:
        self.emit(Yield(values))

    def ret(self, *values: Expr) -> None:
        self.emit(Return(values))

    def break_(self) -> None:
        self.emit(Break())

    def continue_(self) -> None:
        self.emit(Continue())

    # -------------------------------------------------------------- helpers

    @contextmanager
    def _block(self) -> Iterator[list[Stmt]]:
        stmts: list[Stmt] = []
        self._blocks.append(stmts)
        try:
            yield stmts
        finally:
            self._blocks.pop()

    @staticmethod
    def _loop_frame(var: Var | None, iter_args: Sequence[tuple[str, Expr]],
                    return_names: Sequence[str] | None) -> LoopFrame:
        its = [IterArg(n, init.type, init) for n, init in iter_args]
        names = return_names if return_names is not None else [a.name for a in its]
        if len(names) != len(its):
            raise ValueError(f"{len(its)} iter args but {len(names)} return names")
        return LoopFrame(var, its, [Var(n, a.type) for n, a in zip(names, its)])
