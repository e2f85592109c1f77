"""Python's `ast.parse` and `compile` of AST objects, one thread at a time.

CPython before 3.13 keeps the recursion-depth counter of its AST object conversion in
process-wide state (python/cpython#106905): two threads converting ASTs at once can fail with
`SystemError: AST constructor recursion depth mismatch`. Every plang call that builds AST
objects from source or compiles AST objects goes through here, under one lock; parsing a
kernel's source takes well under a millisecond, so the lock costs concurrency nothing.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename)


def compile_ast(node: ast.AST, filename: str, mode: str) -> CodeType:
    with _LOCK:
        return compile(node, filename, mode)
