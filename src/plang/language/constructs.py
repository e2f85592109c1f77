"""Parser constructs: loops, scopes, yields, submits and parse-time helpers.

The parser recognizes these by identity where they are written (a `for` iterator, a `with`
item, a statement); they build no value of their own. Called anywhere else they raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..dtypes import DataType
from ..errors import ParserSyntaxError
from ..ir.enums import SplitMode
from .dispatch import active_state, current_span, is_parsing
from .values import int_literal, wrap


def _construct(kind: str, usage: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a function as a parser construct of `kind`, written as `usage`."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = fn.__name__

        def misuse(*args: Any, **kwargs: Any) -> Any:
            active_state(f"pl.{name}")
            raise ParserSyntaxError(f"pl.{name} can only be used {usage}")

        misuse.__name__ = misuse.__qualname__ = name
        misuse.__doc__ = fn.__doc__
        misuse.pl_construct = kind  # type: ignore[attr-defined]
        misuse.pl_signature = fn  # type: ignore[attr-defined]
        return misuse

    return deco


@_construct("loop", "as the iterator of a for loop: `for i in pl.range(n)`")
def range(*args: Any, init_values: Any = None, attrs: Any = None) -> Any:
    """Sequential loop: `for i in pl.range(stop)` / `(start, stop, step)`, optional carried values;
    `attrs={"name": value}` attaches loop attributes (scheduling hints the passes read)."""


@_construct("loop", "as the iterator of a for loop: `for i in pl.parallel(n)`")
def parallel(*args: Any, init_values: Any = None, attrs: Any = None) -> Any:
    """Parallel loop (ForKind.Parallel)."""


@_construct("loop", "as the iterator of a for loop: `for i in pl.unroll(n)`")
def unroll(*args: Any) -> Any:
    """Compile-time unrolled loop (ForKind.Unroll); no carried values."""


@_construct("loop", "as the iterator of a for loop: `for i in pl.pipeline(n, stage=2)`")
def pipeline(*args: Any, stage: int, init_values: Any = None, attrs: Any = None) -> Any:
    """Software-pipelined loop (ForKind.Pipeline) with `stage` body copies."""


@_construct("while", "as `for (a, b) in pl.while_(init_values=(x, y)):`")
def while_(*, init_values: Any = None) -> Any:
    """While loop over carried values; the body starts with `pl.cond(c)`."""


@_construct("yield", "as the last statement of a loop or branch: `a = pl.yield_(x)`")
def yield_(*values: Any) -> Any:
    """Yield carried values out of a loop / branch body."""


@_construct("cond", "as the first statement of a `pl.while_` body")
def cond(condition: Any) -> Any:
    """The condition of the enclosing `pl.while_` loop."""


@_construct("scope", "as a `with` item: `with pl.at(level=...):`")
def at(
    level: Any = None,
    role: Any = None,
    *,
    optimizations: Any = None,
    deps: Any = None,
    no_dep_args: Any = None,
    dumps: Any = None,
    allow_early_resolve: bool = False,
    predicate: Any = None,
    name_hint: str = "",
    windowize: bool = False,
    cache_policies: Any = None,
) -> Any:
    """A region executed at a hierarchy level (InCore for CORE_GROUP, Hierarchy otherwise)."""


@_construct("scope", "as a `with` item: `with pl.cluster():`")
def cluster(*, name_hint: str = "") -> Any:
    """A co-scheduled AIC + AIV cluster region."""


@_construct("scope", 'as `with pl.graph("name"):`')
def graph(name: str) -> Any:
    """A recordable orchestration graph region."""


@_construct("spmd", "as `with pl.spmd(n):` or `for i in pl.spmd(n):`")
def spmd(
    core_num: Any,
    *,
    sync_start: bool = False,
    name_hint: str = "",
    optimizations: Any = None,
    deps: Any = None,
    allow_early_resolve: bool = False,
    predicate: Any = None,
    cache_policies: Any = None,
) -> Any:
    """An SPMD multi-block region (`cache_policies=` is the printed form of pl.set_cache_policy)."""


@_construct("split_aiv", "as `for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):`")
def split_aiv(n: int, *, mode: SplitMode) -> Any:
    """An explicit AIV-split region; the loop variable is the AIV lane."""


@_construct("scope", "as a `with` item: `with pl.scope():`")
def scope(*, mode: Any = None) -> Any:
    """A runtime scope (AUTO dependency tracking unless mode=MANUAL)."""


@_construct("scope", "as a `with` item: `with pl.fused(rows=64):`")
def fused(*, rows: Any = None) -> Any:
    """A kernel fusion region (written by the FuseTileOps pass): with `rows`, the statements run
    as one loop over the tiles' rows; without, a producer and a row reduction of it share
    one pass over the elements."""


@_construct("scope", "as a `with` item: `with pl.manual_scope():`")
def manual_scope() -> Any:
    """A runtime scope with manual dependency tracking."""


@_construct("submit", "as `out, tid = pl.submit(self.kernel, args...)`")
def submit(*args: Any, **kwargs: Any) -> Any:
    """Submit a kernel and capture its producer TaskId."""


@_construct("submit", "as `out, tid = pl.spmd_submit(self.kernel, args..., core_num=n)`")
def spmd_submit(*args: Any, **kwargs: Any) -> Any:
    """Launch a kernel as one SPMD task and capture its TaskId."""


@_construct("no_dep", "directly as an argument of a kernel call: `self.k(pl.no_dep(x))`")
def no_dep(tensor: Any) -> Any:
    """Mark a kernel-call argument as not dependency-tracked."""


@_construct("func_attr", "as a statement at the start of a function body")
def func_attr(attrs: dict[str, Any]) -> Any:
    """Function-level attributes, written in the body prologue."""


@_construct("static_assert", 'as a statement: `pl.static_assert(cond, "message")`')
def static_assert(condition: Any, msg: str = "") -> Any:
    """Check a compile-time condition while parsing."""


@_construct("static_print", "as a statement: `pl.static_print(x)`")
def static_print(*args: Any) -> Any:
    """Print parse-time information about values."""


@_construct("dump_tag", "as a statement: `pl.dump_tag(tensor)`")
def dump_tag(tensor: Any) -> Any:
    """Mark a tensor for selective dump in every later kernel call that consumes it."""


@_construct("set_cache_policy", "as a statement directly inside a pl.at / pl.spmd scope")
def set_cache_policy(tensor: Any, policy: Any) -> Any:
    """Declare the GM cache policy of a tensor's reads in the enclosing scope."""


@dataclass(frozen=True)
class Split:
    """`pl.split(mode)` in `optimizations=`."""

    mode: SplitMode
    slot_num: int | None = None


@dataclass(frozen=True)
class CrossCoreSlot:
    """`pl.cross_core_slot(slot_num=n)` in `optimizations=`."""

    slot_num: int


def split(mode: SplitMode, *, slot_num: int | None = None) -> Split:
    """A split optimization entry for `pl.at(..., optimizations=[...])` / `pl.spmd`."""
    if not isinstance(mode, SplitMode):
        raise ParserSyntaxError(f"pl.split needs a pl.SplitMode, got {mode!r}")
    if slot_num is not None:
        import warnings

        warnings.warn(
            "pl.split(slot_num=) is deprecated; use pl.cross_core_slot(slot_num=N)",
            DeprecationWarning,
            stacklevel=2,
        )
        _positive_slot(slot_num)
    return Split(mode, slot_num)


def cross_core_slot(*, slot_num: int) -> CrossCoreSlot:
    """A cross-core pipe depth entry for `pl.at(..., optimizations=[...])`."""
    return CrossCoreSlot(_positive_slot(slot_num))


def _positive_slot(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ParserSyntaxError(f"slot_num must be a positive integer, got {n!r}")
    return n


def const(value: int | float, dtype: DataType) -> Any:
    """A constant of an explicit dtype; outside a DSL body it returns `value` unchanged."""
    if not is_parsing():
        return value
    from ..ir.expr import ConstFloat

    if not isinstance(dtype, DataType):
        raise ParserSyntaxError(f"pl.const needs a dtype such as pl.INT32, got {dtype!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParserSyntaxError(f"pl.const needs an int or float literal, got {value!r}")
    if dtype.is_float:
        return wrap(ConstFloat(value, dtype, current_span()))
    if isinstance(value, float):
        raise ParserSyntaxError(f"pl.const({value!r}, {dtype!r}): a float value needs a float dtype")
    return wrap(int_literal(value, dtype, current_span()))


def is_construct(obj: Any, kind: str | None = None) -> bool:
    k = getattr(obj, "pl_construct", None)
    return k is not None and (kind is None or k == kind)


__all__ = [
    "CrossCoreSlot",
    "Split",
    "at",
    "cluster",
    "cond",
    "const",
    "cross_core_slot",
    "dump_tag",
    "set_cache_policy",
    "func_attr",
    "graph",
    "manual_scope",
    "no_dep",
    "parallel",
    "pipeline",
    "range",
    "scope",
    "spmd",
    "spmd_submit",
    "split",
    "split_aiv",
    "static_assert",
    "static_print",
    "submit",
    "unroll",
    "while_",
    "yield_",
]
