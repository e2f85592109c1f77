"""`JitOperator(Operator, library=True)`: an operator whose build is a `@pl.jit` program and
whose call takes torch tensors.

A subclass writes ``build(self, cores)``, which receives ``self.layout()`` (only the key's
parameters are readable there) and returns the ``@pl.jit`` entry. The entry's parameters
are the present operands in declaration order, then every `per_call` value as a
``pl.Scalar`` (a runtime scalar: changing it never recompiles). A ``reference(*inputs,
**per_call)`` in torch is the golden result the tuner checks candidates against.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..jit import RUNTIME, JITFunction
from ..runtime import ChipWorker, RunConfig
from ..target import Device, get_current_device
from .operands import Operand
from .operator import Operator
from .tuning_cache import TUNING_CACHE

_BUILDS: dict[tuple, JITFunction] = {}  # array_key -> the build's @pl.jit entry
_BUILDING = threading.Lock()
_CONFIGS: dict[Device, RunConfig] = {}  # the run config of a current device
_COMPILED: dict[tuple, Any] = {}  # (array_key, tensor shapes and dtypes, compile key) -> program


def run_target(config: RunConfig | None) -> tuple[Device, RunConfig, RunConfig | None]:
    """Where a call runs: (the device, the config to compile for, the config to run with).
    The config's device; else the current `ChipWorker`'s (run on that worker); else the
    current device (`plang.target.get_current_device`)."""
    if config is not None:
        return config.resolved_device(), config, config
    worker = ChipWorker.current()
    if worker is not None:
        return worker.device, worker.config, None
    dev = get_current_device()
    config = _CONFIGS.get(dev)
    if config is None:
        config = _CONFIGS[dev] = RunConfig(device=dev)
    return dev, config, config


class JitOperator(Operator, library=True):
    """An operator whose kernel is a `@pl.jit` program (see the module doc).

    rtol / atol: the tolerances the tuner checks a candidate's result against `reference`
    with (None: torch's defaults for the output dtype).
    """

    rtol: float | None = None
    atol: float | None = None

    def __init_subclass__(cls, library: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(library=library, **kwargs)
        has = {name: any(name in vars(c) for c in cls.__mro__ if c is not JitOperator
                         and issubclass(c, JitOperator)) for name in ("build", "reference")}
        cls.reference_only = has["reference"] and not has["build"]

    # ------------------------------------------------------------ what a subclass writes
    def build(self, cores: Operator) -> JITFunction:
        """The `@pl.jit` entry for `cores` (``self.layout()``); every operator but a
        reference-only one defines it."""
        raise TypeError(f"{type(self).__name__} has a reference and no kernel yet (reference_only); "
                        f"define build(self, cores)")

    def reference(self, *inputs: torch.Tensor, **per_call: int) -> Any:
        """The torch result for `inputs` (one tensor or a tuple, in output order)."""
        raise TypeError(f"{type(self).__name__} has no reference(); define one to tune or check it")

    # ------------------------------------------------------------ building
    def jit(self) -> JITFunction:
        """The build of this resolved operator, shared by every operator with its
        `array_key()` (the `@pl.jit` entry then compiles once per shape)."""
        if not self.is_resolved:
            raise TypeError(f"{self!r} is not resolved: call op.resolved(device) (or call the operator)")
        key = self.array_key()
        entry = _BUILDS.get(key)
        if entry is None:
            with _BUILDING:
                entry = _BUILDS.get(key)
                if entry is None:
                    entry = self.build(self.layout())
                    if not isinstance(entry, JITFunction) or entry.kind != "orchestration":
                        raise TypeError(f"{type(self).__name__}.build() must return a @pl.jit entry, "
                                        f"got {entry!r}")
                    _BUILDS[key] = entry
        return entry

    # ------------------------------------------------------------ calling
    def __call__(self, *inputs: Any, out: Any = None, config: RunConfig | None = None,
                 tuned: bool = True, **per_call: int) -> Any:
        """Run on torch `inputs` (the present `In` / `InOut` operands, in order): checks their
        shapes against the declaration, resolves for the run's device (a tuned choice from
        the tuning cache first, unless ``tuned=False``), builds, compiles once per shape and
        runs. `out`: the output tensor(s) to write (else allocated). Per-call values are
        keywords. Returns the output tensor, or a tuple of them."""
        if self.reference_only:
            raise TypeError(f"{type(self).__name__} has a reference and no kernel yet (reference_only)")
        bad = next((t for t in inputs if not isinstance(t, torch.Tensor)), None)
        if bad is not None:
            raise TypeError(f"{type(self).__name__}() takes torch tensors, got {type(bad).__name__}")
        dev, compile_config, config = run_target(config)
        given_outs = _as_list(out)
        plan = self._plan(inputs, given_outs, dev, tuned, compile_config)
        op = plan.op
        # the call's tensors by operand, in the plan's order: the fills, then the outputs
        tensors = [_check_tensor(op, m, t) for m, t in zip(plan.fills, inputs)]
        if given_outs:
            tensors += [_check_tensor(op, m, t) for m, t in zip(plan.outs, given_outs)]
        else:
            tensors += [torch.empty(shape, dtype=m.torch_dtype) for m, shape in plan.allocate]
        args = [tensors[i] for i in plan.order]
        if per_call or op.declaration.per_calls:
            args += op._per_call_values(per_call)
        ChipWorker.for_call(config).run_checked(plan.program, args)
        if len(plan.results) == 1:
            return tensors[plan.results[0]]
        return tuple(tensors[i] for i in plan.results)

    def _plan(self, inputs: Sequence[torch.Tensor], outs: list, dev: Device, tuned: bool,
              config: RunConfig) -> _CallPlan:
        """What a call with these tensors' shapes and dtypes runs (memoized per operator, so
        a repeated call only checks its tensors): the operator resolved for `dev`, its
        operands and the compiled program."""
        # (the compile key's device is `dev`: its platform and pipeline complete it)
        key = (dev, tuned, TUNING_CACHE.version, config.platform, config.strategy, _shapes(inputs),
               _shapes(outs))
        memo = vars(self).setdefault("_plans", {})
        plan = memo.get(key)
        if plan is not None:
            return plan
        op = self._for(dev, tuned)
        fills = [m for m in op._present() if m.fills]
        results = [m for m in op._present() if not m.fills]
        names = [m.name for m in fills][:len(inputs)] + [f"input{i}" for i in range(len(fills), len(inputs))]
        given = {m.name: _check_tensor(op, m, t) for m, t in zip(results, outs)}
        shapes = {n: tuple(t.shape) for n, t in zip(names, inputs)}
        op.declaration.infer(shapes, [tuple(t.shape) for t in outs],
                             **{n: vars(op)[n] for n in op.declaration.params})
        tensors = {m.name: _check_tensor(op, m, t) for m, t in zip(fills, inputs)}
        allocate = tuple((m, _out_shape(m, tensors)) for m in results)
        tensors |= given or {m.name: torch.empty(shape, dtype=m.torch_dtype) for m, shape in allocate}
        args = [tensors[m.name] for m in op._present()]
        program = op._compiled(args, len(op.declaration.per_calls), config)
        if len(memo) >= 16:
            memo.clear()
        returned = results or [m for m in fills if m.direction == "InOut"]
        position = {m.name: i for i, m in enumerate([*fills[:len(inputs)], *results])}
        plan = memo[key] = _CallPlan(op, tuple(fills), tuple(results), allocate,
                                     tuple(position[m.name] for m in op._present()),
                                     tuple(position[m.name] for m in returned), program)
        return plan

    @classmethod
    def call(cls, *inputs: Any, out: Any = None, config: RunConfig | None = None, tuned: bool = True,
             **given: Any) -> Any:
        """Infer the parameters from `inputs` (the keywords naming parameters pin them, the
        others are per-call values), construct the operator and call it."""
        decl = cls.declaration
        params = {k: v for k, v in given.items() if k in decl.params}
        per_call = {k: v for k, v in given.items() if k not in decl.params}
        names = _input_names(cls, len(inputs), params)
        inferred = decl.infer(dict(zip(names, (tuple(t.shape) for t in inputs))),
                              [tuple(t.shape) for t in _as_list(out)], **params)
        args = {k: v for k, v in inferred.items() if k in decl.params and decl.params[k].init
                and (k in params or not decl.params[k].computes())}
        return cls(**args)(*inputs, out=out, config=config, tuned=tuned, **per_call)

    # ------------------------------------------------------------ helpers
    def _for(self, dev: Device, tuned: bool) -> JitOperator:
        """This operator resolved for `dev`; its unset tunables from the tuning cache first
        (memoized per device until the tuning cache changes)."""
        if self.is_resolved and self.resolved_for == dev:
            return self
        memo = vars(self).setdefault("_dispatch", {})
        key = (dev, tuned, TUNING_CACHE.version)
        hit = memo.get(key)
        if hit is None:
            best = None
            if tuned and any(vars(self)[n] is None for n in self.declaration.tunables):
                best = TUNING_CACHE.lookup(self, dev)
            hit = self._unresolved.replace(**best).resolved(dev) if best is not None else self.resolved(dev)
            memo.clear()
            memo[key] = hit
        return hit

    def _compiled(self, args: list[torch.Tensor], scalars: int, config: RunConfig) -> Any:
        """The compiled program for these tensors (per-call values unspecialized), memoized by
        the build, the tensors' shapes and dtypes, and the config's compile key."""
        key = (self.array_key(), tuple((t.shape, t.dtype) for t in args), config.compile_key())
        hit = _COMPILED.get(key)
        if hit is None:
            hit = _COMPILED[key] = self.jit().compile(*args, *[RUNTIME] * scalars, config=config)
        return hit

    def _present(self) -> list[Operand]:
        """The present operands bound to this operator (memoized: an operator is immutable)."""
        memo = vars(self).get("_present_memo")
        if memo is None:
            bound = self.bound
            memo = vars(self)["_present_memo"] = [bound[m.name] for m in self.declaration.operands
                                                  if m.name in bound]
        return memo

    def _per_call_values(self, given: dict[str, Any]) -> list[int]:
        members = self.declaration.per_calls
        if not members and not given:
            return []
        unknown = sorted(set(given) - {m.name for m in members if m.given_per_call})
        if unknown:
            raise TypeError(f"{type(self).__name__}() takes no per-call value {unknown}")
        values = []
        for m in members:
            if m.given_per_call:
                if m.name not in given:
                    raise TypeError(f"{type(self).__name__}() needs the per-call value {m.name}=")
                values.append(m.check(self, given[m.name]))
            else:
                values.append(m.of(self))
        return values


@dataclass(frozen=True)
class _CallPlan:
    """A call's resolved operator, its fill and output operands, the outputs to allocate
    (operand, shape), the program's tensor arguments and the returned tensors (positions in
    the call's fill tensors followed by its output tensors), and the compiled program."""

    op: JitOperator
    fills: tuple[Operand, ...]
    outs: tuple[Operand, ...]
    allocate: tuple[tuple[Operand, tuple[int, ...]], ...]
    order: tuple[int, ...]
    results: tuple[int, ...]
    program: Any


def _shapes(tensors: Sequence[Any]) -> tuple:
    return tuple((t.shape, t.dtype) if isinstance(t, torch.Tensor) else type(t) for t in tensors)


def _as_list(out: Any) -> list:
    return [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out]


def _check_tensor(op: Operator, m: Operand, t: Any) -> torch.Tensor:
    """A call's tensor for operand `m`: a contiguous CPU torch tensor of its dtype."""
    if type(t) is torch.Tensor and t.dtype is m.torch_dtype and t.is_cpu and t.is_contiguous():
        return t
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{type(op).__name__}: operand {m.name} takes a torch tensor, got {type(t).__name__}")
    if t.dtype != m.torch_dtype:
        raise TypeError(f"{type(op).__name__}: operand {m.name} is {m.dtype.name}, got a {t.dtype} tensor")
    if t.device.type != "cpu" or not t.is_contiguous():
        raise ValueError(f"{type(op).__name__}: operand {m.name} must be a contiguous CPU tensor")
    return t


def _out_shape(m: Operand, tensors: dict[str, torch.Tensor]) -> tuple[int, ...]:
    return tuple(tensors[m.like.name].shape) if m.like is not None else m.shape


def _input_names(cls: type, count: int, params: dict[str, Any]) -> Sequence[str]:
    """The fill operands `count` positional inputs stand for: the unconditional ones, those
    whose ``when=`` flag the caller gives true, and, in declaration order, as many of the
    ones whose flag the caller leaves unset as `count` needs (infer sets their flags)."""
    operands = [m for m in cls.declaration.operands if m.fills]
    sure = {m.name for m in operands if m.when is None or params.get(m.when.name, False) is True}
    maybe = [m.name for m in operands if m.when is not None and m.when.name not in params]
    chosen = sure | set(maybe[:max(0, count - len(sure))])
    return [m.name for m in operands if m.name in chosen]
