"""The asynchronous GM -> L2 prefetch family (`pl.prefetch.*`): `make_context`,
`async_prefetch(src, ctx)` (an event), `session(ctx)` and `wait(event, session)` (BOOL).

A prefetch only warms a cache and changes no value, so a kernel computes the same with or
without it. The handles are opaque (`AsyncHandleType`: `pl.PrefetchAsyncContext`,
`pl.AsyncEvent`, `pl.AsyncSession`), as in the reference; on the CPU chip, whose memory is the
host's, they carry nothing and `wait` returns True at once. `async_prefetch` and `wait` order
the kernel (unit `sync`), so passes keep them in place. The checks are the reference's (a GM
tensor of static shape that is logically 1D, each handle from its producer), so a program that
runs here also passes them on Ascend."""

from __future__ import annotations

from ...dtypes import BOOL
from ..types import AsyncHandleType, ScalarType, TensorType, Type, dim_value
from .common import P, fmt_shape, fmt_type
from .registry import Bound, register

CONTEXT, EVENT, SESSION = (AsyncHandleType(k) for k in ("PrefetchAsyncContext", "AsyncEvent", "AsyncSession"))
_PRODUCERS = {CONTEXT.kind: "prefetch.make_context", EVENT.kind: "prefetch.async_prefetch",
              SESSION.kind: "prefetch.session"}


def _handle(b: Bound, name: str, want: AsyncHandleType) -> None:
    t = b[name].type
    if not isinstance(t, AsyncHandleType) or t.kind != want.kind:
        raise b.fail(f"expects {name} to be a pl.{want.kind} (the result of {_PRODUCERS[want.kind]}), "
                     f"got {fmt_type(t)}")


def _context(b: Bound) -> Type:
    return CONTEXT


def _async_prefetch(b: Bound) -> Type:
    t = b.src.type
    if not isinstance(t, TensorType):
        raise b.fail(f"src must be a GM tensor (prefetch reads global memory), got {fmt_type(t)}")
    dims = [dim_value(d) for d in t.shape]
    if None in dims:
        raise b.fail(f"src needs a static shape (a compile-time byte extent), got {fmt_shape(t.shape)}")
    if any(d != 1 for d in dims[:-1]):
        raise b.fail(f"src must be a flat 1D region (every dim but the last 1), got {fmt_shape(t.shape)}; "
                     "reshape it to [N] or [1, ..., N]")
    _handle(b, "ctx", CONTEXT)
    return EVENT


def _session(b: Bound) -> Type:
    _handle(b, "ctx", CONTEXT)
    return SESSION


def _wait(b: Bound) -> Type:
    _handle(b, "event", EVENT)
    _handle(b, "session", SESSION)
    return ScalarType(BOOL)


def _register_all() -> None:
    register("prefetch.make_context", [], _context, unit="system", unified=False,
             doc="A prefetch context handle (on the CPU it holds nothing: there is no DMA workspace).")
    register("prefetch.async_prefetch", [P("src", "tensor"), P("ctx", "value")], _async_prefetch,
             unit="sync", unified=False,
             doc="Start warming L2 with a flat GM tensor; returns the event to wait on (no effect on the "
                 "CPU, whose memory is the host's).")
    register("prefetch.session", [P("ctx", "value")], _session, unit="system", unified=False,
             doc="The session handle prefetch.wait waits in.")
    register("prefetch.wait", [P("event", "value"), P("session", "value")], _wait, unit="sync",
             unified=False, doc="Block until the prefetch of event has landed; True (at once on the CPU).")


_register_all()
