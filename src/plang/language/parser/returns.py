"""The meaning of an early `return` in a DSL block, applied to the Python AST before parsing.

A `return` ends the function: the statements after a statement that always returns are
unreachable and dropped, and when one branch of an `if` always returns, the statements after
the `if` are the other branch's continuation (moved into it). Blocks reached this way end in
a `return` on every path, which the IR (an `If` whose branches each return) expresses.
"""

from __future__ import annotations

import ast


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every path through `stmts` ends in a `return`."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    if isinstance(last, ast.With):
        return always_returns(last.body)
    return False


def close_returns(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with early returns applied: unreachable statements dropped, and the rest of the
    block moved into the non-returning branch of an `if` whose other branch returns."""
    for i, s in enumerate(body):
        if always_returns([s]):
            return body[: i + 1]
        rest = body[i + 1 :]
        if not (isinstance(s, ast.If) and rest):
            continue
        then_ret, else_ret = always_returns(s.body), always_returns(s.orelse)
        if then_ret == else_ret:
            continue
        then, orelse = (s.body + rest, s.orelse) if else_ret else (s.body, s.orelse + rest)
        node = ast.If(s.test, then, orelse)
        return [*body[:i], ast.copy_location(node, s)]
    return body
