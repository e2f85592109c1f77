"""The autotuner: `tune(op, *inputs)` searches an operator's ``tunable(domain=...)`` space on
a device by timing real runs, and keeps the winner in a `TuningCache` (memory, and disk next
to the JIT cache).

Each candidate is resolved (`compatible()` or `Unresolvable` rejects it), built and run once
(a compile error, such as a tile over the device's buffer capacity, rejects it), and its
result checked against ``reference()`` (a wrong result rejects it). The candidates left are
then timed together: `warmup` runs each, then `repeat` rounds of one run each, in a new order
every round, so a change of load on the machine hits them alike; a candidate's time is its
median. The `FINALISTS` fastest and the candidate `resolve` alone picks are then timed again
side by side (at least twice `repeat` rounds, more for fast candidates: `FINAL_SECONDS`), and
the winner is the fastest of that final round unless it beats `resolve`'s pick by no more
than `MARGIN` (timing noise).
Rejections are kept with their reason in the `TuneReport`.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

import torch

from ..runtime import RunConfig
from ..target import Device
from .library import JitOperator, run_target
from .operator import Unresolvable
from .tuning_cache import TUNING_CACHE

COUNTERS = {"timed": 0, "cache_hits": 0, "disk_hits": 0}
"""Process-wide counts: candidates timed, `tune` calls answered by the cache (and of those,
by the disk cache)."""


@dataclass
class Candidate:
    """One point of the search: its tunables, its median seconds, or why it was skipped."""

    values: dict[str, Any]
    seconds: float | None = None
    reason: str | None = None


@dataclass
class TuneReport:
    """What `tune_report` found: the best operator (resolved), its tunables, where they
    came from (``"search"``, ``"memory"`` or ``"disk"``) and each candidate."""

    best: JitOperator
    tunables: dict[str, Any]
    source: str
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def skipped(self) -> list[Candidate]:
        return [c for c in self.candidates if c.reason is not None]

    def __str__(self) -> str:
        lines = [f"{self.best!r} (from the {self.source})" if self.source != "search" else
                 f"{self.best!r} (searched {len(self.candidates)} candidates)"]
        for c in self.candidates:
            what = ", ".join(f"{k}={v!r}" for k, v in c.values.items())
            lines.append(f"  {what}: " + (f"{c.seconds * 1e3:.3f} ms" if c.reason is None else
                                            f"skipped: {c.reason}"))
        return "\n".join(lines)


def _space(op: JitOperator, dev: Device) -> tuple[list[str], list[tuple], dict[str, Any] | None]:
    """The tunables searched (init, with a domain, not given by the caller), their values,
    and what `resolve` alone picks for them (None where it raises)."""
    decl = op.declaration
    names = [n for n in decl.tunables if decl.params[n].domain is not None and n not in op._given]
    try:
        start = op.resolved(dev)
    except ValueError:
        start = None
    domains = []
    for n in names:
        domain = decl.params[n].domain
        if isinstance(domain, type) and issubclass(domain, Enum):
            values = tuple(domain)
        elif isinstance(domain, tuple):
            values = domain
        else:
            values = tuple(domain(op, dev, None if start is None else vars(start)[n]))
        domains.append(tuple(dict.fromkeys(values)))
    picked = None if start is None else {n: vars(start)[n] for n in names}
    return names, list(itertools.product(*domains)), picked


def _check(op: JitOperator, got: Any, expected: Any) -> None:
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    tolerances = {} if op.rtol is None else {"rtol": op.rtol, "atol": op.atol}
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e.to(g.dtype), **tolerances)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def tune_report(op: JitOperator, *inputs: torch.Tensor, device: Device | None = None,
                config: RunConfig | None = None, repeat: int = 5, warmup: int = 1,
                measure: Callable[[JitOperator], float] | None = None, cache: bool = True,
                progress: bool | None = None, **per_call: int) -> TuneReport:
    """Tune `op` for `inputs` (see `tune`) and say how: a `TuneReport`."""
    if not isinstance(op, JitOperator):
        raise TypeError(f"tune() takes a JitOperator, got {type(op).__name__}")
    if repeat < 1 or warmup < 0:
        raise ValueError(f"tune(repeat={repeat}, warmup={warmup}): repeat >= 1 and warmup >= 0")
    if device is not None and config is None:
        config = RunConfig(device=device)
    dev = device if device is not None else run_target(config)[0]
    op = op._unresolved
    if cache:
        hit = TUNING_CACHE.get(op, dev)
        if hit is not None:
            COUNTERS["cache_hits"] += 1
            COUNTERS["disk_hits"] += hit[1] == "disk"
            return TuneReport(op.replace(**hit[0]).resolved(dev), hit[0], hit[1])
    names, points, picked = _space(op, dev)
    expected = op.reference(*inputs, **per_call)
    # an operator updating an input in place changes it on every run: each checked run
    # starts from a copy of the inputs as given, the timed runs use a scratch copy, and the
    # caller's tensors are left alone
    in_place = any(m.direction == "InOut" for m in op.declaration.operands)
    given, inputs = inputs, _copies(inputs) if in_place else inputs
    shown = progress if progress is not None else len(points) > 8 and sys.stderr.isatty()
    found: list[Candidate] = []
    passed: list[tuple[Candidate, JitOperator]] = []
    for i, point in enumerate(points):
        cand = Candidate(dict(zip(names, point)))
        found.append(cand)
        chosen = _try(op, cand, dev, _copies(given) if in_place else inputs, expected, config, per_call)
        if chosen is not None and measure is not None:
            cand.seconds = measure(chosen)
        elif chosen is not None:
            passed.append((cand, chosen))
        if shown:
            what = ("skipped" if cand.reason else "checked" if cand.seconds is None
                    else f"{cand.seconds * 1e3:.3f} ms")
            print(f"\rtune {type(op).__name__}: {i + 1}/{len(points)} {cand.values} {what}   ",
                  end="", file=sys.stderr, flush=True)
    if passed:
        if shown:
            print(f"\rtune {type(op).__name__}: timing {len(passed)} candidates in {repeat} rounds   ",
                  end="", file=sys.stderr, flush=True)
        for (cand, _), seconds in zip(passed, _time([o for _, o in passed], inputs, config, repeat,
                                                    warmup, per_call)):
            cand.seconds = seconds
    timed = [c for c in found if c.seconds is not None]
    COUNTERS["timed"] += len(timed)
    if shown:
        best = min(timed, key=lambda c: c.seconds, default=None)
        print("" if best is None else f"; {len(timed)} timed, fastest {best.values} "
              f"{best.seconds * 1e3:.3f} ms", file=sys.stderr)
    if not timed:
        reasons = "; ".join(f"{c.values}: {c.reason}" for c in found) or "the search space is empty"
        raise Unresolvable(f"tune({type(op).__name__}): no candidate runs on {dev.name}: {reasons}")
    final = measure is None and len(timed) > 1
    if final:
        timed = _final_round(op, dev, timed, picked, inputs, config, repeat, per_call)
    winner = min(timed, key=lambda c: c.seconds)
    default = next((c for c in timed if c.values == picked), None) if final else None
    if default is not None and winner.seconds > default.seconds * (1 - MARGIN):
        winner = default  # a gain within the timing noise does not replace resolve's pick
    report = TuneReport(op.replace(**winner.values).resolved(dev), winner.values, "search", found)
    if cache:
        TUNING_CACHE.store(op, dev, winner.values, summary=str(report))
    return report


def _copies(inputs: tuple) -> tuple:
    return tuple(t.clone() for t in inputs)


def _try(op: JitOperator, cand: Candidate, dev: Device, inputs: tuple, expected: Any,
         config: RunConfig | None, per_call: dict) -> JitOperator | None:
    """Resolve, build, run and check one candidate: the resolved operator, or None with the
    candidate's reason set."""
    try:
        chosen = op.replace(**cand.values).resolved(dev)
    except ValueError as e:  # compatible() or Unresolvable
        cand.reason = _first_line(e)
        return None
    try:
        _check(op, chosen(*inputs, config=config, tuned=False, **per_call), expected)
    except AssertionError as e:
        cand.reason = "wrong result: " + _first_line(e).removeprefix("AssertionError: ")
        return None
    except Exception as e:  # a build that does not compile or run here, or a result the
        cand.reason = _first_line(e)  # reference cannot be compared with
        return None
    return chosen


def _time(ops: list[JitOperator], inputs: tuple, config: RunConfig | None, repeat: int, warmup: int,
          per_call: dict) -> list[float]:
    """The median seconds of each operator's run (`ops`: candidates of one operator), timed
    after `warmup` untimed runs each (at least one) in rounds of one run each, in a new order
    every round (so a change of load on the machine hits every one alike). All write into
    the outputs the first run allocates: a fresh multi-MB output costs a page fault per 4 KiB
    page whenever the allocator hands out new memory (a 16 MiB softmax: 2.0 or 8.1 ms, by the
    allocator's state), which would time the allocator instead of the candidate, and one set
    of outputs keeps a search of many candidates from holding one set each."""
    out = {}
    if any(not m.fills for m in ops[0]._present()):  # else it only updates InOut inputs
        out = {"out": ops[0](*inputs, config=config, tuned=False, **per_call)}
    for op in ops:
        for _ in range(max(warmup, 1)):
            op(*inputs, **out, config=config, tuned=False, **per_call)
    samples: list[list[float]] = [[] for _ in ops]
    order, shuffle = list(range(len(ops))), random.Random(0).shuffle
    for _ in range(repeat):
        shuffle(order)  # no candidate always runs right after the same other one
        for i in order:
            t = time.perf_counter()
            ops[i](*inputs, **out, config=config, tuned=False, **per_call)
            samples[i].append(time.perf_counter() - t)
    return [statistics.median(mine) for mine in samples]


FINALISTS = 3
MARGIN = 0.03  # how much faster than resolve's pick a timed winner must be to replace it
FINAL_SECONDS = 1.0
FINAL_ROUNDS = 40
"""The final round runs at least twice `repeat` rounds, more for fast candidates: as many
as fill FINAL_SECONDS, up to FINAL_ROUNDS. Six rounds of 1-2 ms candidates on a shared
2-vCPU VM had picked a one-block LayerNorm over the two-block default (1.99 ms against 1.54
when timed again); with a quarter of a second, the 8x512x512x64 FP32 attention's ~10 ms
finalists got 7 rounds on that VM, whose speed swings by half within seconds, and kept
`resolve`'s qr=64, kv=128 over qr=32, kv=512, which is 9% faster interleaved over 21 rounds."""


def _final_round(op: JitOperator, dev: Device, timed: list[Candidate], picked: dict[str, Any] | None,
                 inputs: tuple, config: RunConfig | None, repeat: int, per_call: dict) -> list[Candidate]:
    """The `FINALISTS` fastest candidates, and the one `resolve` alone picks, timed again
    side by side (see `FINAL_SECONDS`): their seconds become the final round's medians, and
    the winner is among them."""
    finalists = sorted(timed, key=lambda c: c.seconds)[:FINALISTS]
    finalists += [c for c in timed if c.values == picked and c not in finalists]
    ops = [op.replace(**c.values).resolved(dev) for c in finalists]
    filled = math.ceil(FINAL_SECONDS / max(sum(c.seconds for c in finalists), 1e-9))
    rounds = max(2 * repeat, min(filled, FINAL_ROUNDS))
    for c, seconds in zip(finalists, _time(ops, inputs, config, rounds, 1, per_call)):
        c.seconds = seconds
    return finalists


def tune(op: JitOperator, *inputs: torch.Tensor, device: Device | None = None,
         config: RunConfig | None = None, repeat: int = 5, warmup: int = 1,
         measure: Callable[[JitOperator], float] | None = None, cache: bool = True,
         progress: bool | None = None, **per_call: int) -> JitOperator:
    """The fastest legal resolution of `op` for `inputs` on the device (`device`, else the
    config's, else the current one), from the tuning cache when it has one.

    repeat / warmup: timed and untimed runs per candidate (the median counts). measure:
    a cost function of a resolved candidate to use instead of timing. cache: read and write
    the `TuningCache`. progress: print a progress line (default: for more than 8
    candidates, on a terminal). Per-call values go in as keywords. The fastest few and the
    one `resolve` picks are timed again side by side before the winner is chosen; the
    `resolve` pick stays unless the fastest beats it by more than `MARGIN` (3%). Raises
    `Unresolvable` when no candidate runs, listing each one's reason.
    """
    return tune_report(op, *inputs, device=device, config=config, repeat=repeat, warmup=warmup,
                       measure=measure, cache=cache, progress=progress, **per_call).best
