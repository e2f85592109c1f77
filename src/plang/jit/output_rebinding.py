"""The reference's rule for a `@pl.jit` entry's outputs: a value bound to an Out / InOut
parameter's name must be read before the name is bound again.

`result = pl.mul(x, 2.0)` followed directly by `result = pl.add(x, 1.0)` discards the first
value: it never reaches the caller's `result` tensor. The reference fails such a kernel in
code generation (`PartialCodegenError`); plang reports it before compiling, at the rebinding,
with the same error class (a rebinding the program reads in between, such as
`y = pl.assemble(y, t, [0, 0])`, is the normal way to write an output and is untouched).
"""

from __future__ import annotations

import ast
from typing import Iterable

from ..backend.pto_backend import PartialCodegenError
from ..ir.enums import ParamDirection
from ..ir.function import Function
from ..ir.span import Span
from ..ir.stmt import Return, flatten
from ..ir.types import TensorType, describe_type, static_shape
from .source import FunctionSource


class DiscardedOutputError(PartialCodegenError):
    """An Out / InOut parameter rebound while its previous value was never used."""

    def __str__(self) -> str:
        return self.render()


def check_output_rebinding(src: FunctionSource) -> None:
    outs = {p.name for p in src.params if p.kind == "tensor" and p.direction is not ParamDirection.In}
    if outs:
        _block(src, src.fdef.body, outs)


def _block(src: FunctionSource, stmts: list[ast.stmt], outs: set[str]) -> None:
    pending: dict[str, ast.stmt] = {}  # output name -> the statement whose value is unread
    for st in stmts:
        reads = {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for name in reads:
            pending.pop(name, None)
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id in outs:
                    if t.id in pending:
                        raise _error(src, st, t.id, pending[t.id])
                    pending[t.id] = st
        else:
            stored = {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            for name in stored:  # bound in a nested block: treated as used
                pending.pop(name, None)
        for body in ("body", "orelse", "finalbody"):
            inner = getattr(st, body, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _block(src, inner, outs)


def _error(src: FunctionSource, st: ast.stmt, name: str, earlier: ast.stmt) -> DiscardedOutputError:
    line, first = src.orig_line(st.lineno), src.orig_line(earlier.lineno)
    text = src.lines[st.lineno - 1] if st.lineno - 1 < len(src.lines) else None
    err = DiscardedOutputError(
        f"output parameter {name!r} is bound again before the value bound at line {first} is used: "
        f"that value would never reach the caller's {name!r} tensor; use it (e.g. "
        f"`{name} = pl.assemble({name}, value, offsets)`) or drop the first binding")
    err.span = Span(src.filename, line, st.col_offset, line, st.end_col_offset or st.col_offset)
    err.source_line = text
    return err


class OutputTypeError(PartialCodegenError):
    """An Out / InOut parameter whose final value (what the entry returns for it) has another
    shape or dtype than the parameter: it cannot be written back into the caller's tensor."""


def check_writebacks(entry: Function, writebacks: Iterable[tuple[int, str]]) -> None:
    """Each (result position, parameter name) of `writebacks` has the parameter's dtype and,
    where both are static, its shape."""
    params = {p.name: p for p in entry.params}
    body = flatten(entry.body)
    where = body[-1].span if body and isinstance(body[-1], Return) else entry.span
    for pos, name in writebacks:
        if name not in params or pos >= len(entry.return_types):
            continue
        got, want = entry.return_types[pos], params[name].type
        if not (isinstance(got, TensorType) and isinstance(want, TensorType)):
            continue
        shapes = static_shape(got.shape), static_shape(want.shape)
        if got.dtype is not want.dtype or None not in shapes and shapes[0] != shapes[1]:
            err = OutputTypeError(f"{entry.name}: the final value of output parameter {name!r} is "
                                  f"{describe_type(got)}, but the parameter is {describe_type(want)}")
            err.span = where
            raise err
