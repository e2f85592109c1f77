"""Structural equality and hashing of IR, modulo variable renaming.

Vars are matched by a bijection established on first encounter (definition or use), so
alpha-renamed programs are equal while swapping two variables is not. Spans never take
part. Statement bodies compare as their flattened statement lists (nested `SeqStmts`, a
one-statement body and a missing `else` are the same as their flattened form). Mappings
(attrs, kwargs, program functions) compare key by key; enums, dtypes and Ops compare by
value, `GlobalVar` by name. Both walks use an explicit stack, so depth is not limited by
Python's recursion limit.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Mapping

from ..dtypes import DataType
from .expr import ConstBool, ConstFloat, ConstInt, IterArg, Var
from .node import Node
from .ops.registry import Op
from .stmt import SeqStmts, Stmt, flatten

_BODY_FIELDS = frozenset(("body", "then_body", "else_body"))
_CONSTS = (ConstInt, ConstFloat, ConstBool)
_BODY = object()  # marks a stack entry holding two statement bodies to flatten

# A path is a linked list of (parent, segment) tuples, rendered only on failure.
Path = tuple | None


def structural_equal(a: Any, b: Any) -> bool:
    """True when `a` and `b` have the same structure up to a renaming of variables."""
    return _first_difference(a, b) is None


def assert_structural_equal(a: Any, b: Any) -> None:
    """Raise `AssertionError` naming the first differing path, e.g.
    `functions['main'].body[3].value.args[1].type.shape[0]: 64 vs 128`."""
    diff = _first_difference(a, b)
    if diff is not None:
        raise AssertionError(diff)


def _first_difference(a: Any, b: Any) -> str | None:
    fwd: dict[Var, Var] = {}
    bwd: dict[Var, Var] = {}
    stack: list[tuple[Any, Any, Path]] = [(a, b, None)]
    pop, push = stack.pop, stack.append
    while stack:
        x, y, path = pop()
        if x is _BODY:  # (marker, (xbody, ybody), path)
            xb, yb = y
            xs, ys = flatten(xb), flatten(yb)
            if len(xs) != len(ys):
                return f"{_render(path)}: {len(xs)} vs {len(ys)} statements"
            for i in range(len(xs) - 1, -1, -1):
                push((xs[i], ys[i], (path, f"[{i}]")))
            continue
        tx = type(x)
        if tx is not type(y):
            if isinstance(x, Stmt) or isinstance(y, Stmt):
                push((_BODY, (x, y), path))
                continue
            if isinstance(x, Node) and isinstance(y, Node):
                return f"{_render(path)}: {tx.__name__} {_show(x)} vs {type(y).__name__} {_show(y)}"
            return f"{_render(path)}: {_show(x)} vs {_show(y)}"
        if isinstance(x, Node):
            if isinstance(x, Var):
                mapped = fwd.get(x)
                if mapped is y:
                    continue
                if mapped is not None:
                    return (f"{_render(path)}: variable {x.name!r} is matched to {mapped.name!r} "
                            f"earlier, here to {y.name!r}")
                if y in bwd:
                    return (f"{_render(path)}: variable {y.name!r} is matched to {bwd[y].name!r} "
                            f"earlier, here to {x.name!r}")
                fwd[x], bwd[y] = y, x
                if tx is IterArg:
                    push((x.init, y.init, (path, ".init")))
                push((x.type, y.type, (path, ".type")))
                continue
            if tx in _CONSTS:
                if not _same_scalar(x.value, y.value) or x.type.dtype is not y.type.dtype:
                    return f"{_render(path)}: {_show(x)} vs {_show(y)}"
                continue
            if tx is SeqStmts:
                push((_BODY, (x, y), path))
                continue
            fields = tx._fields
            for k in range(len(fields) - 1, -1, -1):
                f = fields[k]
                if f in _BODY_FIELDS:
                    push((_BODY, (getattr(x, f), getattr(y, f)), (path, "." + f)))
                else:
                    push((getattr(x, f), getattr(y, f), (path, "." + f)))
        elif tx is tuple or tx is list:
            if len(x) != len(y):
                return f"{_render(path)}: {len(x)} vs {len(y)} elements"
            for i in range(len(x) - 1, -1, -1):
                push((x[i], y[i], (path, f"[{i}]")))
        elif isinstance(x, Mapping):
            if x.keys() != y.keys():
                return f"{_render(path)}: keys {sorted(x)} vs {sorted(y)}"
            for k in reversed(list(x)):
                push((x[k], y[k], (path, f"[{k!r}]")))
        elif tx is Op:
            if x.name != y.name:
                return f"{_render(path)}: {x.name} vs {y.name}"
        elif not _same_scalar(x, y):
            return f"{_render(path)}: {_show(x)} vs {_show(y)}"
    return None


def _same_scalar(x: Any, y: Any) -> bool:
    if x is y:
        return True
    if type(x) is float:
        return x == y or (math.isnan(x) and math.isnan(y))
    return isinstance(x, (int, str, bytes)) and x == y


def structural_hash(x: Any) -> int:
    """A hash consistent with `structural_equal` (equal structures hash equal)."""
    tokens: list[Any] = []
    add = tokens.append
    var_ids: dict[Var, int] = {}
    stack: list[Any] = [_BodyItem(x) if isinstance(x, Stmt) else x]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        if type(v) is _BodyItem:
            stmts = flatten(v.stmt)
            add(("body", len(stmts)))
            stack.extend(reversed(stmts))
            continue
        tv = type(v)
        if isinstance(v, Node):
            if isinstance(v, Var):
                n = var_ids.get(v)
                if n is not None:
                    add(("var", n))
                    continue
                var_ids[v] = len(var_ids)
                add(("newvar", tv))
                if tv is IterArg:
                    push(v.init)
                push(v.type)
                continue
            if tv is SeqStmts:
                push(_BodyItem(v))
                continue
            add(tv)
            if tv in _CONSTS:
                add(_scalar_token(v.value))
                add(v.type.dtype)
                continue
            fields = tv._fields
            for k in range(len(fields) - 1, -1, -1):
                f = fields[k]
                val = getattr(v, f)
                push(_BodyItem(val) if f in _BODY_FIELDS else val)
        elif tv is tuple or tv is list:
            add(("seq", len(v)))
            stack.extend(reversed(v))
        elif isinstance(v, Mapping):
            keys = sorted(v)
            add(("map", tuple(keys)))
            stack.extend(v[k] for k in reversed(keys))
        elif tv is Op:
            add(("op", v.name))
        else:
            add(_scalar_token(v))
    return hash(tuple(tokens))


class _BodyItem:
    """A statement body waiting to be hashed as its flattened statement list."""

    __slots__ = ("stmt",)

    def __init__(self, stmt: Stmt | None) -> None:
        self.stmt = stmt


def _scalar_token(v: Any) -> Any:
    if type(v) is float and math.isnan(v):
        return "nan"
    return v


def _render(path: Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, seg = path
        parts.append(seg)
    text = "".join(reversed(parts))
    return text[1:] if text.startswith(".") else text or "<root>"


def _show(v: Any) -> str:
    if isinstance(v, Node):
        from .printer import python_print

        return python_print(v).split("\n", 1)[0]
    if isinstance(v, DataType):
        return f"pl.{v.name}"
    if isinstance(v, Enum):
        return f"pl.{type(v).__name__}.{v.name}"
    return repr(v)
