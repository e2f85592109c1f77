"""Static extents of subscripts with computed bounds.

`x[:, k : k + 64]` and `x[:, k + 64 : k + 128]` have the extent 64: both bounds are read as
sums of integer multiples of the same terms, which cancel.
"""

from __future__ import annotations

from typing import Any

from ..ir import expr as E
from .values import DSLValue

Affine = tuple[list[tuple[E.Expr, int]], int]  # (term, coefficient) pairs and a constant


def constant_extent(start: Any, stop: Any) -> int | None:
    """`stop - start` as an int when the bounds differ by a constant, else None."""
    terms, const = _affine(stop)
    neg_terms, neg_const = _affine(start)
    for term, coeff in neg_terms:
        _accumulate(terms, term, -coeff)
    if all(c == 0 for _, c in terms):
        return const - neg_const
    return None


def _affine(v: Any) -> Affine:
    if isinstance(v, int):
        return [], v
    e = v.unwrap() if isinstance(v, DSLValue) else v
    terms: list[tuple[E.Expr, int]] = []
    const = _collect(e, 1, terms)
    return terms, const


def _collect(e: E.Expr, scale: int, terms: list[tuple[E.Expr, int]]) -> int:
    """Add `scale * e` to `terms`; return its constant part."""
    if isinstance(e, E.ConstInt):
        return scale * e.value
    if isinstance(e, (E.Add, E.Sub)):
        sign = 1 if isinstance(e, E.Add) else -1
        return _collect(e.lhs, scale, terms) + _collect(e.rhs, sign * scale, terms)
    if isinstance(e, E.Neg):
        return _collect(e.operand, -scale, terms)
    if isinstance(e, E.Mul):
        for k, rest in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(k, E.ConstInt):
                return _collect(rest, scale * k.value, terms)
    _accumulate(terms, e, scale)
    return 0


def _accumulate(terms: list[tuple[E.Expr, int]], term: E.Expr, coeff: int) -> None:
    for i, (t, c) in enumerate(terms):
        if _same_expr(t, term):
            terms[i] = (t, c + coeff)
            return
    terms.append((term, coeff))


def _same_expr(a: E.Expr, b: E.Expr) -> bool:
    """`a` and `b` compute the same value: the same vars under the same constants and operators."""
    if a is b:
        return True
    if isinstance(a, E.ConstInt) and isinstance(b, E.ConstInt):
        return a.value == b.value
    if isinstance(a, E.BinaryExpr) and type(a) is type(b):
        return _same_expr(a.lhs, b.lhs) and _same_expr(a.rhs, b.rhs)
    return False


__all__ = ["constant_extent"]
