"""`@iron.jit`: build a design from its generator on a cache miss, then run it.

The generator's parameters are marked: `In` / `Out` / `InOut` tensors (unmarked ones without
a default are `InOut` tensors), ``CompileTime[T]`` values (each value its own build) and
keyword-only ``DispatchTime[np.intN]`` integers (a new value per call, no rebuild). A call
binds its arguments, keys the build by the generator, each tensor's shape and dtype, the
CompileTime values and the device, and on a miss calls the generator with operands (shape and
dtype, no data) under ``set_current_device``. Builds live in memory; their compiled kernels
on disk (a new process re-runs the generator, which is Python, and loads the kernels)."""

from __future__ import annotations

import functools
import hashlib
import inspect
import threading
from contextvars import ContextVar
from typing import Any, Callable, get_type_hints

import numpy as np
import torch

from ..operators.markers import COMPILE_TIME, DISPATCH_TIME, marker_of
from ..operators.operands import InOut, Operand
from ..runtime.config import RunConfig
from ..target import get_current_device, set_current_device
from . import state
from .program import Program, ResolvedDesign
from .runtime import DispatchParameter

#: keywords of the seed's jit that choose aiecc / XRT options: accepted, no effect
_TOOL_OPTIONS = ("is_placed", "aiecc_flags", "full_elf", "use_cache", "object_files", "source_files")
_COMPILE_ARGS: ContextVar[dict] = ContextVar("iron_compile_args", default={})


def get_compile_arg(name: str, default: Any = None) -> Any:
    """A compile-time argument of the design being built (for helpers the generator calls)."""
    return _COMPILE_ARGS.get().get(name, default)


def compileconfig(**compile_args: Any) -> Callable:
    """Attach compile-time configuration to a design generator."""
    def attach(generator: Callable) -> Callable:
        generator.__iron_compile_config__ = {**getattr(generator, "__iron_compile_config__", {}),
                                             **compile_args}
        return generator
    return attach


class _Param:
    __slots__ = ("name", "kind", "marker", "default", "scalar")

    def __init__(self, name: str, kind: str, marker: Any, default: Any, scalar: Any = None) -> None:
        self.name, self.kind, self.marker, self.default, self.scalar = name, kind, marker, default, scalar


def _read_params(generator: Callable) -> list[_Param]:
    try:
        hints = get_type_hints(generator, include_extras=True)
    except Exception as exc:
        raise TypeError(f"@iron.jit could not read the annotations of {generator.__qualname__}: "
                        f"{exc}") from None
    params = []
    for p in inspect.signature(generator).parameters.values():
        hint = hints.get(p.name, inspect.Parameter.empty)
        marker = marker_of(hint) if hint is not inspect.Parameter.empty else None
        default = p.default
        if marker is DISPATCH_TIME:
            if p.kind is not inspect.Parameter.KEYWORD_ONLY:
                raise TypeError(f"{generator.__qualname__}: DispatchTime parameter {p.name!r} must be "
                                "keyword-only (after *)")
            params.append(_Param(p.name, "dispatch", marker, default, hint.__origin__))
        elif marker is COMPILE_TIME:
            params.append(_Param(p.name, "compile", marker, default))
        elif marker is not None:
            params.append(_Param(p.name, "tensor", marker, default))
        elif default is not inspect.Parameter.empty:
            raise TypeError(f"{generator.__qualname__}: parameter {p.name!r} has a default but no "
                            f"marker; annotate it CompileTime[...] (a build per value), "
                            f"DispatchTime[np.int32] (per call), or In / Out / InOut (a tensor)")
        else:
            params.append(_Param(p.name, "tensor", InOut, default))
    return params


def _per_call_int(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"DispatchTime parameter {name!r} takes an integer, got {value!r} "
                        "(a per-call value is an integer)")
    return int(value)


class CallableDesign:
    """A built design bound to the generator's parameter order: call it with the tensors."""

    def __init__(self, design: ResolvedDesign, operands: dict[str, Operand],
                 params: list[_Param]) -> None:
        self.design, self.params = design, params
        ids = {id(op): name for name, op in operands.items()}
        tensor_names = [p.name for p in params if p.kind == "tensor"]
        runtime_inputs = design.runtime.arg_types
        self.order = [ids.get(id(a)) for a in runtime_inputs]
        if None in self.order:
            if len(runtime_inputs) != len(tensor_names):
                raise TypeError(f"the Runtime takes {len(runtime_inputs)} inputs but the generator "
                                f"has {len(tensor_names)} tensors; pass the generator's operands "
                                "to Runtime fn_args")
            self.order = tensor_names

    def __call__(self, values: dict[str, Any], config: RunConfig | None, dispatch: dict,
                 parameters: dict | None = None) -> None:
        inputs = [values[name] for name in self.order]
        self.design(*inputs, config=config, dispatch=dispatch, parameters=parameters)

    @property
    def last_trace(self) -> str | None:
        return self.design.last_trace


class CompilableDesign:
    """A design generator with its compile-time configuration; calling it builds (on a cache
    miss) and runs the design."""

    def __init__(self, generator: Callable, **compile_args: Any) -> None:
        if not callable(generator):
            raise TypeError(f"@iron.jit takes a design generator function, got {generator!r}")
        self.generator = generator
        self.params = _read_params(generator)
        names = {p.name for p in self.params}
        prebound = {**getattr(generator, "__iron_compile_config__", {}), **compile_args}
        self.options = {k: prebound.pop(k) for k in list(prebound) if k in _TOOL_OPTIONS}
        unknown = sorted(set(prebound) - names)
        if unknown:
            raise TypeError(f"{generator.__qualname__} has no parameter {unknown}")
        self.prebound = prebound
        try:
            text = inspect.getsource(generator)
        except (OSError, TypeError):
            text = generator.__qualname__
        self._source_hash = hashlib.sha256(text.encode()).hexdigest()[:16]
        self._cache: dict[tuple, CallableDesign] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, generator)

    def specialize(self, **values: Any) -> CompilableDesign:
        """A copy with more values bound ahead of time (CompileTime values, tensor types)."""
        return CompilableDesign(self.generator, **{**self.options, **self.prebound, **values})

    def _bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        values = dict(self.prebound)
        positional = [p for p in self.params if p.name not in values and p.kind != "dispatch"]
        if len(args) > len(positional):
            raise TypeError(f"{self.__name__}() takes {len(positional)} positional arguments, "
                            f"got {len(args)}")
        values.update(zip((p.name for p in positional), args))
        for k, v in kwargs.items():
            if k not in {p.name for p in self.params}:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument {k!r}")
            values[k] = v
        for p in self.params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    raise TypeError(f"{self.__name__}() missing argument {p.name!r}")
                values[p.name] = p.default
        return values

    def _operand(self, p: _Param, value: Any) -> Operand:
        if isinstance(value, np.ndarray):
            value = torch.from_numpy(value)
        if isinstance(value, torch.Tensor):
            return p.marker(*value.shape, dtype=value.dtype)
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape is None:
            raise TypeError(f"{self.__name__}: tensor parameter {p.name!r} takes a tensor, got "
                            f"{type(value).__name__}")
        return p.marker(*shape, dtype=dtype)

    def compile(self, *args: Any, config: RunConfig | None = None, **kwargs: Any) -> CallableDesign:
        """The built design for these arguments (built on a cache miss)."""
        values = self._bind(args, kwargs)
        device = config.resolved_device() if config is not None else get_current_device()
        key = [self._source_hash, self.generator.__qualname__, device.name]
        for p in self.params:
            v = values[p.name]
            if p.kind == "tensor":
                key.append((p.name, tuple(v.shape), str(v.dtype)))
            elif p.kind == "compile":
                key.append((p.name, repr(v)))
        key = tuple(key)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        with self._lock:
            hit = self._cache.get(key)
            if hit is None:
                hit = self._cache[key] = self._build(values, device)
        return hit

    def _build(self, values: dict[str, Any], device: Any) -> CallableDesign:
        state.COUNTERS["builds"] += 1
        operands: dict[str, Operand] = {}
        call: dict[str, Any] = {}
        for p in self.params:
            if p.kind == "tensor":
                call[p.name] = operands[p.name] = self._operand(p, values[p.name])
            elif p.kind == "dispatch":
                call[p.name] = DispatchParameter(p.name, p.scalar, self)
            else:
                call[p.name] = values[p.name]
        token = _COMPILE_ARGS.set({k: v for k, v in call.items() if k not in operands})
        try:
            with set_current_device(device):
                made = self.generator(**call)
                if isinstance(made, Program):
                    made = made.resolve_program()
        finally:
            _COMPILE_ARGS.reset(token)
        if not isinstance(made, ResolvedDesign):
            raise TypeError(f"{self.__name__} must return a Program (or program.resolve_program()), "
                            f"got {type(made).__name__}")
        return CallableDesign(made, operands, self.params)

    def __call__(self, *args: Any, config: RunConfig | None = None, parameters: dict | None = None,
                 **kwargs: Any) -> None:
        built = self.compile(*args, config=config, **kwargs)
        values = self._bind(args, kwargs)
        dispatch = {p.name: _per_call_int(p.name, values[p.name]) for p in self.params
                    if p.kind == "dispatch"}
        tensors = {p.name: values[p.name] for p in self.params if p.kind == "tensor"}
        built(tensors, config, dispatch, parameters)
        self.last_trace = built.last_trace

    last_trace: str | None = None


def jit(generator: Callable | None = None, /, **compile_args: Any) -> Any:
    """``@iron.jit`` / ``@iron.jit(tile=256)`` / ``iron.jit(generator, tile=256)``."""
    if generator is None:
        return lambda g: CompilableDesign(g, **compile_args)
    return CompilableDesign(generator, **compile_args)
