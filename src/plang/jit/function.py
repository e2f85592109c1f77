"""`JITFunction`: a `@pl.jit` kernel with shape specialization and caching.

Call path: fast key (each argument's shape/dtype or scalar value + config) → in-memory
`CompiledProgram`; on a miss, bind (checks every argument against its annotation) →
specialization key → memory cache → disk cache → specialize, parse, lower, generate code.
The memory cache keeps the `$PLANG_JIT_CACHE_ENTRIES` (default 128) most recently used
specializations of each entry; an evicted one comes back from the disk cache.
"""

from __future__ import annotations

import ast
import os
import threading
from collections import OrderedDict
from typing import Any, Callable

from ..ir.enums import ParamDirection
from .binding import Binding, bind, tensor_meta
from .compiler import (
    compile_binding,
    constant_names,
    constants_key,
    live_value,
    lower_program,
    parse_specialized,
    run_config,
    source_key,
)
from .source import FunctionSource, read_source


class JITFunction:
    """Created by `@pl.jit`, `@pl.jit.incore` and `@pl.jit.inline`."""

    def __init__(self, func: Callable, kind: str, auto_scope: bool | None = None,
                 single_core: bool = False) -> None:
        if kind == "incore" and auto_scope is not None:
            raise TypeError("@pl.jit.incore does not take auto_scope=: an incore kernel is outlined into "
                            "its own function, so runtime scopes never land in a caller")
        self._func = func
        self.kind = kind
        self.single_core = single_core
        self.auto_scope = True if auto_scope is None else auto_scope
        self._source: FunctionSource | None = None
        self._deps: list[JITFunction] | None = None
        self._cache: OrderedDict[tuple, Any] = OrderedDict()  # least recently used first
        self._fast: dict[tuple, Any] = {}
        self._lock = threading.Lock()
        self._building: dict[tuple, threading.Event] = {}
        self.__wrapped__ = func
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__

    # -- introspection -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._func.__name__

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = read_source(self._func)
        return self._source

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.source.params]

    @property
    def output_param_names(self) -> list[str]:
        return [p.name for p in self.source.params if p.direction is not ParamDirection.In]

    def dependencies(self) -> list[JITFunction]:
        """`@pl.jit.*` functions this body refers to by name."""
        if self._deps is None:
            seen: list[JITFunction] = []
            for node in ast.walk(self.source.fdef):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    value = self.source.namespace.get(node.id)
                    if isinstance(value, JITFunction) and value is not self and value not in seen:
                        if value.kind == "orchestration":
                            raise TypeError(f"{self.name} calls @pl.jit function {value.name}; only "
                                            f"@pl.jit.incore / @pl.jit.inline functions can be called")
                        seen.append(value)
            self._deps = seen
        return self._deps

    def __repr__(self) -> str:
        return f"<pl.jit{'' if self.kind == 'orchestration' else '.' + self.kind} {self.name}>"

    # -- specialization ------------------------------------------------------------------
    def _bind(self, args: tuple, kwargs: dict, call: bool = False) -> Binding:
        return bind(self.name, self.source.params, self.source.bound_dynamic, args, kwargs, call)

    def specialize(self, *args: Any, **kwargs: Any):
        """Pre-pass `ir.Program` for these arguments (no passes, no codegen, cache untouched)."""
        if "config" in kwargs:
            raise TypeError("specialize() takes no config=: the pass pipeline never runs here")
        self._require_entry("specialize")
        return parse_specialized(self, self._bind(args, kwargs))

    def _require_entry(self, what: str) -> None:
        if self.kind != "orchestration":
            raise TypeError(f"{what}() is called on the @pl.jit entry, not on @pl.jit.{self.kind} "
                            f"function {self.name}")

    def lower(self, *args: Any, config=None, **kwargs: Any):
        """Post-pass `ir.Program` for these arguments."""
        self._require_entry("lower")
        return lower_program(parse_specialized(self, self._bind(args, kwargs)), run_config(config))

    def compile(self, *args: Any, config=None, **kwargs: Any):
        """The cached `CompiledProgram` for this specialization."""
        self._require_entry("compile")
        config = run_config(config)
        return self._compiled(self._bind(args, kwargs), config)

    def warmup(self, *args: Any, config=None, **kwargs: Any):
        """Compile every kernel without running anything; returns the CompiledProgram."""
        return self.compile(*args, config=config, **kwargs)  # kernels are built eagerly

    def _compiled(self, binding: Binding, config):
        return self._compiled_with_key(binding, config)[0]

    def _compiled_with_key(self, binding: Binding, config) -> tuple[Any, tuple]:
        key = (source_key(self), binding.key, constants_key(self), config.compile_key())
        return self._compiled_at(key, binding, config), key

    def _compiled_at(self, key: tuple, binding: Binding, config):
        hit = self._cache.get(key)
        if hit is not None:
            self._touch(key)
            return hit
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            event = self._building.get(key)
            owner = event is None
            if owner:
                event = self._building[key] = threading.Event()
        if not owner:
            event.wait()
            return self._compiled_at(key, binding, config)
        try:
            limit = memory_cache_entries()
            compiled = compile_binding(self, binding, config, key)
            with self._lock:
                self._cache[key] = compiled
                self._evict(limit)
            return compiled
        finally:
            with self._lock:
                self._building.pop(key, None)
            event.set()

    # -- calling -------------------------------------------------------------------------
    def __call__(self, *args: Any, config=None, **kwargs: Any):
        if self.kind != "orchestration":
            raise TypeError(f"@pl.jit.{self.kind} function {self.name} can only be called from a "
                            f"@pl.jit entry")
        fast_key = _fast_key(args, kwargs, config)
        hit = self._fast.get(fast_key) if fast_key is not None else None
        if hit is not None and self._cache.get(hit[2]) is hit[0] and self._constants_unchanged(hit[1]):
            compiled = hit[0]  # (still in the specialization cache: eviction drops it)
            self._touch(hit[2])
        else:
            compiled, key = self._compiled_with_key(self._bind(args, kwargs, call=True), run_config(config))
            if fast_key is not None:
                if len(self._fast) >= _FAST_ENTRIES:  # e.g. a dynamic dim taking many sizes
                    self._fast.clear()
                snapshot = tuple((fn, name, live_value(fn, name)) for fn, name in constant_names(self))
                self._fast[fast_key] = (compiled, snapshot, key)
        return compiled(*self._positional(compiled, args, kwargs), config=config)

    def _touch(self, key: tuple) -> None:
        try:
            self._cache.move_to_end(key)
        except KeyError:  # evicted meanwhile by another thread
            pass

    def _evict(self, limit: int) -> None:
        """Drop the least recently used specializations beyond `limit` (under `_lock`)."""
        while len(self._cache) > limit:
            old, _ = self._cache.popitem(last=False)
            self._fast = {k: v for k, v in self._fast.items() if v[2] != old}

    def _positional(self, compiled, args: tuple, kwargs: dict) -> list:
        """The call's values in the compiled signature's order (specialized scalars dropped)."""
        if len(compiled.signature) == len(args) and not kwargs:
            return list(args)
        values = dict(zip(self.param_names, args))
        values.update(kwargs)
        return [values[p.name] for p in compiled.signature]

    @staticmethod
    def _constants_unchanged(snapshot: tuple) -> bool:
        for fn, name, value in snapshot:
            current = live_value(fn, name)
            if current is not value and current != value:
                return False
        return True


_FAST_ENTRIES = 4096  # exact-argument entries kept per kernel in front of the specialization cache


def memory_cache_entries() -> int:
    """`$PLANG_JIT_CACHE_ENTRIES` (default 128): compiled specializations each `@pl.jit` entry
    keeps in memory."""
    text = os.environ.get("PLANG_JIT_CACHE_ENTRIES", "128")
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"PLANG_JIT_CACHE_ENTRIES must be a positive integer, got {text!r}")
    return value


def _fast_key(args: tuple, kwargs: dict, config) -> tuple | None:
    parts: list[Any] = [config.compile_key() if config is not None else None]
    for a in args:
        shape = getattr(a, "shape", None)
        if shape is not None:  # a torch.Size hashes and compares as the tuple of its dims
            parts.append((shape if isinstance(shape, tuple) else tuple(shape), a.dtype))
        elif isinstance(a, (int, float, bool)):
            parts.append((type(a), a))
        else:
            return None
    if kwargs:
        for k, v in sorted(kwargs.items()):
            meta = tensor_meta(v) if getattr(v, "shape", None) is not None else None
            parts.append((k, meta if meta is not None else (type(v), v)))
    return tuple(parts)


class _JITDecorator:
    """`pl.jit`, `pl.jit(auto_scope=False)`, `pl.jit.incore`, `pl.jit.inline`, `pl.jit.host`."""

    def __call__(self, func: Callable | None = None, *, auto_scope: bool | None = None):
        if func is None:
            return lambda f: JITFunction(f, "orchestration", auto_scope)
        return JITFunction(func, "orchestration", auto_scope)

    def incore(self, func: Callable | None = None, *, single_core: bool = False, **kwargs: Any):
        """`@pl.jit.incore`: a kernel; `single_core=True` runs its cube and vector work on one
        core of the simulated chip instead of an AIC / AIV pair
        (`plang.passes.expand_mixed_kernel.SINGLE_CORE`)."""
        if "auto_scope" in kwargs:
            raise TypeError("@pl.jit.incore does not take auto_scope=: an incore kernel is outlined into "
                            "its own function, so runtime scopes never land in a caller")
        if kwargs:
            raise TypeError(f"@pl.jit.incore got unexpected keyword(s) {sorted(kwargs)}")
        if func is None:
            return lambda f: JITFunction(f, "incore", single_core=single_core)
        return JITFunction(func, "incore", single_core=single_core)

    def host(self, func: Callable):
        """`@pl.jit.host`: a HOST orchestrator dispatching `@pl.jit` programs per rank."""
        from ..distributed.host import HostFunction

        return HostFunction(func)

    def inline(self, func: Callable | None = None, *, auto_scope: bool | None = None):
        if func is None:
            return lambda f: JITFunction(f, "inline", auto_scope)
        return JITFunction(func, "inline", auto_scope)


jit = _JITDecorator()
