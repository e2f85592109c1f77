"""Kernels a Worker calls: `ExternalFunction` (C/C++ source compiled by the system compiler
with the current kernel target's flags), `Kernel` (a prebuilt host object or shared library)
and `IncoreKernel` (a plang ``@pl.jit.incore`` function, compiled by plang for the shapes it
is called with). A call checks each array against the declared `arg_types`, passes its data
pointer and releases the GIL while the native code runs; with a trace on it is a slice."""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from .. import cache_root, native_build
from ..errors import Error, UnsupportedConstructError
from ..target import get_current_device
from . import state
from .dtype import obj_type_of, torch_dtype

_SCALARS = {np.dtype(np.int8): ctypes.c_int8, np.dtype(np.int16): ctypes.c_int16,
            np.dtype(np.int32): ctypes.c_int32, np.dtype(np.int64): ctypes.c_int64,
            np.dtype(np.uint8): ctypes.c_uint8, np.dtype(np.uint16): ctypes.c_uint16,
            np.dtype(np.uint32): ctypes.c_uint32, np.dtype(np.uint64): ctypes.c_uint64,
            np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double}
_HOST_MACHINES = {"x86_64": 62, "aarch64": 183}
_registry: dict[str, str] = {}  # object file name -> recipe key
_registry_lock = threading.Lock()


class KernelCompileError(Error, RuntimeError):
    """A kernel's C/C++ source did not compile, or its symbol is missing."""


class _Arg:
    """How one declared argument is checked and passed."""

    __slots__ = ("shape", "numel", "torch_dtype", "ctype", "index")

    def __init__(self, index: int, arg_type: Any) -> None:
        self.index = index
        dt = np.dtype(arg_type) if isinstance(arg_type, type) and issubclass(arg_type, np.generic) else None
        if dt is not None:
            if dt not in _SCALARS:
                raise TypeError(f"kernel argument {index}: scalar type {dt} is not supported")
            self.shape, self.numel, self.torch_dtype, self.ctype = None, 0, None, _SCALARS[dt]
            return
        shape, dtype = obj_type_of(arg_type)
        self.shape, self.numel = shape, int(np.prod(shape))
        self.torch_dtype, self.ctype = torch_dtype(dtype), ctypes.c_void_p


class _Native:
    """A symbol of a shared library bound to declared argument types."""

    def __init__(self, library: str, symbol: str, arg_types: Sequence[Any], label: str) -> None:
        lib = ctypes.CDLL(library)
        try:
            fn = getattr(lib, symbol)
        except AttributeError:
            raise KernelCompileError(f"{label}: {library} exports no symbol {symbol!r} (a C++ kernel "
                                     f"needs extern \"C\")") from None
        self.args = [_Arg(i, t) for i, t in enumerate(arg_types)]
        fn.argtypes, fn.restype = [a.ctype for a in self.args], None
        self.fn, self.label = fn, label

    def __call__(self, *values: Any) -> None:
        if len(values) != len(self.args):
            raise TypeError(f"{self.label} takes {len(self.args)} arguments, got {len(values)}")
        passed = []
        for a, v in zip(self.args, values):
            if a.shape is None:
                if isinstance(v, (torch.Tensor, np.ndarray)):
                    raise TypeError(f"{self.label}: argument {a.index} is a scalar, got an array")
                passed.append(v)
                continue
            if isinstance(v, np.ndarray):
                v = torch.from_numpy(v)
            if not isinstance(v, torch.Tensor):
                raise TypeError(f"{self.label}: argument {a.index} is an array of {a.shape}, got "
                                f"{type(v).__name__}")
            if v.dtype != a.torch_dtype or v.numel() != a.numel or not v.is_contiguous():
                raise TypeError(f"{self.label}: argument {a.index} must be a contiguous {a.torch_dtype} "
                                f"array of shape {a.shape}, got {v.dtype} {tuple(v.shape)}")
            passed.append(v.data_ptr())
        run = state.maybe_run()
        if run is None or not run.traced():
            self.fn(*passed)
            return
        start = time.perf_counter_ns()
        self.fn(*passed)
        run.record(self.label, start)


class _Bound(ABC):
    """Shared by the kernel classes: declared argument types and a lazily loaded binding."""

    def __init__(self, name: str, arg_types: Sequence[Any] | None,
                 stack_size_override: int | None) -> None:
        if not name:
            raise ValueError("Kernel name cannot be empty.")
        self._name, self._arg_types = name, list(arg_types or [])
        for t in self._arg_types:
            _Arg(0, t)  # validate now
        self.stack_size_override = stack_size_override
        self._native: _Native | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def arg_types(self) -> list[Any]:
        return list(self._arg_types)

    def arg_shape(self, i: int) -> tuple[int, ...]:
        return obj_type_of(self._arg_types[i])[0]

    def arg_dtype(self, i: int) -> np.dtype:
        t = self._arg_types[i]
        return np.dtype(t) if isinstance(t, type) and issubclass(t, np.generic) else obj_type_of(t)[1]

    def tile_size(self, i: int) -> int:
        return int(np.prod(self.arg_shape(i)))

    def frame_bytes(self, target_arch: Any = None, *_: Any, **__: Any) -> int:
        """The stack frame aiecc would measure: here `stack_size_override` (or 0)."""
        return self.stack_size_override or 0

    def measure(self, target_arch: Any = None, *_: Any, **__: Any) -> None:
        """None: nothing measures an AIE kernel on the CPU chip."""
        return None

    @abstractmethod
    def _library(self) -> str:
        """Path of the shared library holding the symbol (built on first use)."""

    def _symbol(self) -> str:
        return self._name

    def build(self) -> None:
        """Compile / load the native code now (otherwise the first call does)."""
        with self._lock:
            if self._native is None:
                self._native = _Native(self._library(), self._symbol(), self._arg_types,
                                       f"kernel {self._name}")

    def __call__(self, *args: Any) -> None:
        if self._native is None:
            self.build()
        self._native(*args)


class Kernel(_Bound):
    """An AIE core function backed by a pre-compiled object file: on the CPU chip a host
    object (``.o``, linked here) or shared library (``.so``)."""

    def __init__(self, name: str, object_file_name: str, arg_types: Sequence[Any] | None = None, *,
                 link_with_mode: Any = None, stack_size_override: int | None = None) -> None:
        super().__init__(name, arg_types, stack_size_override)
        self.object_file_name, self.link_with_mode = str(object_file_name), link_with_mode
        if os.path.isfile(self.object_file_name):
            _check_host_object(self.object_file_name)

    @property
    def object_file(self) -> str:
        return self.object_file_name

    def _library(self) -> str:
        path = self.object_file_name
        if not os.path.isfile(path):
            raise KernelCompileError(f"kernel {self._name}: object file {path!r} not found")
        if path.endswith(".so"):
            return path
        return _build(Path(path), ("-lstdc++",), f"kernel {self._name}")


def _check_host_object(path: str) -> None:
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF":
        return
    machine = int.from_bytes(head[18:20], "little")
    if machine != _HOST_MACHINES.get(os.uname().machine, machine):
        raise UnsupportedConstructError(
            f"Kernel object {path!r} is built for the AIE (ELF machine {machine}); the CPU chip runs "
            "host code", hint="compile the kernel's portable C/C++ source with ExternalFunction")


class ExternalFunction(_Bound):
    """An AIE core function compiled from C/C++ source at JIT time (here for the host)."""

    def __init__(self, name: str, object_file_name: str | None = None, source_file: str | None = None,
                 source_string: str | None = None, arg_types: Sequence[Any] | None = None,
                 include_dirs: Sequence[str] | None = None, compile_flags: Sequence[str] | None = None,
                 *, symbol_prefix: str | None = None, use_chess: bool = False, inline: bool = False,
                 stack_size_override: int | None = None, contract: Any = None) -> None:
        if use_chess:
            if inline:
                raise ValueError("ExternalFunction: inline=True cannot be combined with use_chess=True")
            raise UnsupportedConstructError(
                "ExternalFunction(use_chess=True) builds with the AIE Chess compiler; the CPU chip "
                "compiles kernels with the system C/C++ compiler", hint="drop use_chess")
        if inline and symbol_prefix is not None:
            raise NotImplementedError("ExternalFunction: symbol_prefix with inline=True")
        if source_file is None and source_string is None:
            raise ValueError("source_file or source_string must be provided.")
        if source_file is not None and source_string is not None:
            raise ValueError("ExternalFunction takes source_file or source_string, not both.")
        super().__init__(name, arg_types, stack_size_override)
        self.symbol_prefix, self.use_chess, self.inline, self.contract = (
            symbol_prefix, use_chess, inline, contract)
        self.source_file, self.source_string = source_file, source_string
        self.include_dirs, self.compile_flags = list(include_dirs or []), list(compile_flags or [])
        text = source_string if source_string is not None else _read(source_file)
        self._text = text
        self._cxx = source_file is None or not source_file.endswith(".c")
        self.recipe_key = hashlib.sha256(repr((self._symbol(), source_file, text, self.include_dirs,
                                               self.compile_flags, self._cxx)).encode()).hexdigest()
        self.object_file_name = self._register(object_file_name)

    def _register(self, explicit: str | None) -> str:
        name = explicit or f"{self._name}.o"
        with _registry_lock:
            known = _registry.get(name)
            if known is not None and known != self.recipe_key:
                if explicit:
                    raise ValueError(f"ExternalFunction {self._name!r} would collide with an "
                                     f"already-registered instance: same explicit object_file_name="
                                     f"{explicit!r} but different compile_flags / source. Give it "
                                     "another object_file_name.")
                name = f"{self._name}_{self.recipe_key[:8]}.o"
            _registry[name] = self.recipe_key
        return name

    def _symbol(self) -> str:
        return f"{self.symbol_prefix}_{self._name}" if self.symbol_prefix else self._name

    @property
    def object_file(self) -> str:
        return self.object_file_name

    def _library(self) -> str:
        isa = get_current_device().isa
        # a private per-process folder; the stable name keys plang's native cache across runs
        folder = cache_root.scratch().sub("iron").path
        source = folder / f"{self._name}-{self.recipe_key[:16]}{'.cpp' if self._cxx else '.c'}"
        if not source.exists():
            cache_root.write_atomic(source, self._text.encode())
        flags = ["-O3", *isa.compiler_flags, *(f"-I{d}" for d in self.include_dirs), *self.compile_flags]
        if self.source_file is not None:
            flags.append(f"-I{os.path.dirname(os.path.abspath(self.source_file))}")
        flags += ["-std=c++17", "-lstdc++"] if self._cxx else ["-std=c11"]
        return _build(source, tuple(flags), f"ExternalFunction {self._name}")


def _read(path: str) -> str:
    if not os.path.isfile(path):
        raise ValueError(f"ExternalFunction source_file {path!r} not found")
    with open(path) as f:
        return f.read()


def _build(source: Path, flags: tuple[str, ...], label: str) -> str:
    """`source` (C, C++ or an object) built into a shared library: plang's sealed native cache."""
    try:
        return native_build.build(source, flags=flags)
    except RuntimeError as exc:
        raise KernelCompileError(f"{label}: {exc}\nhint: kernels for the CPU chip are portable "
                                 "C/C++ (no AIE API headers or intrinsics)") from None
