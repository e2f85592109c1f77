"""`Kernel`: a compiled core function — `compile_kernel`, `load_kernel` and external sources.

`compile_kernel(function, device)` builds the function's MLIR module for `device.isa`
(`lower.py`, `isa.py`), keeps its text (`Kernel.mlir_text`, before lowering), verifies it and
has a compile worker lower and compile it (`mlir.compile_native`). `Kernel.save(path)`
writes a shared library plus a JSON sidecar (`path + ".json"`: name, signature, MLIR text);
`load_kernel(path)` loads both in any process without recompiling. Only `compile_kernel`
imports the MLIR side (`mlir.py`, `lower.py`), when first called: loading persisted kernels
(the JIT's disk cache) and external kernels never import the MLIR bindings.

External kernels (`external_source=` on a `@pl.function`): the C/C++ file is compiled with
the system compiler for the device's target — `cc -O3 -march=<level> -fPIC -shared -std=c11`
for `.c`, `c++ -O3 -march=<level> -fPIC -shared -std=c++17` for other suffixes (with the
target's added / removed features: `Isa.compiler_flags`) — with the directory of
a generated `plang_kernel.h` (the ABI's C declarations, `abi.C_HEADER`) on the include path.
The file must define `void <function name>(void **args)` with C linkage, reading its
arguments as the ABI describes (`PLANG_TENSOR_ARG`, `PLANG_SCALAR_ARG`, `PLANG_CONTEXT_ARG`),
or (C++) the reference runtime's ``kernel_entry(int64_t *args)`` (see `reference_abi`).
The library goes into the process's private scratch folder (`plang.cache_root.scratch`,
removed at exit); the header and wrapper are built in a temporary folder removed at once.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Sequence

from ... import ir as pir
from ...cache_root import scratch
from ...dtypes import DataType
from ...passes.fuse_tile_ops import FuseTileOps
from ...target import Device, Isa
from .abi import (
    C_HEADER,
    STATUS_SYNCALL,
    ArgPacker,
    CheckSite,
    LaunchContext,
    PipeApi,
    ScalarArg,
    Signature,
    SyncSite,
    TensorArg,
    ThreadPackers,
    kernel_signature,
    single_block_context,
)
from .native import KernelCompileError, NativeFunction, load_shared_object, packed_symbol
from .reference_abi import uses_reference_abi, write_reference_entry

EXTERNAL_C_FLAGS = ("-O3", "-fPIC", "-shared", "-std=c11")
EXTERNAL_CXX_FLAGS = ("-O3", "-fPIC", "-shared", "-std=c++17")
_ENTRY_WRAPPER = """\
#ifdef __cplusplus
extern "C" {{
#endif
void {fn}(void **args);
void {packed}(void **args) {{ {fn}(args); }}
#ifdef __cplusplus
}}
#endif
"""


class Kernel:
    """A callable native kernel: `kernel(*args, ctx=None)` or `kernel.launch(args, ctx)`."""

    def __init__(self, name: str, signature: Signature, native: NativeFunction,
                 mlir_text: str, engine: Any = None, library: str | None = None,
                 check_sites: Sequence[CheckSite] = (), syncall_sites: Sequence[SyncSite] = ()) -> None:
        self.name = name
        self.signature = signature
        self.mlir_text = mlir_text
        self.check_sites = tuple(check_sites)
        self.syncall_sites = tuple(syncall_sites)
        self._native = native
        self._engine = engine
        self._library = library
        self._packers = ThreadPackers()

    def launch(self, args: Sequence[Any], ctx: LaunchContext | None = None) -> None:
        """Run the kernel once with `args` (torch tensors / numbers) and a launch context;
        raises `BoundsError` when one of its checks failed."""
        packers = self._packers
        packer = packers.packer
        if packer is None:
            packer = packers.packer = ArgPacker(self.signature)
        if ctx is None:
            ctx = packers.default
            if ctx is None:
                ctx = packers.default = single_block_context()
        ctx.own_cancel = 0
        if self.syncall_sites and not ctx.syncall:
            ctx.syncall = _runtime_syncall()
        self._native(packer.pack(args, ctx))
        if ctx.status:
            status, ctx.status = ctx.status, 0
            raise self.status_error(status, ctx)

    def status_error(self, status: int, ctx: LaunchContext) -> BaseException:
        """The error a launch whose context reports `status` (!= 0) raises."""
        sites = self.syncall_sites if status == STATUS_SYNCALL else self.check_sites
        return sites[ctx.check_site].error(self.name, ctx)

    def __call__(self, *args: Any, ctx: LaunchContext | None = None, block_idx: int = 0,
                 block_num: int = 1, subblock_idx: int = 0, pipes: Any = None, barrier: Any = None) -> None:
        """Launch with the runtime's keywords (`pipes` is a `plang.runtime.pipes.PipeSet`,
        `barrier` a `plang.runtime.barriers.LaunchBarrier`)."""
        if ctx is None and (block_idx or block_num != 1 or subblock_idx or pipes is not None
                            or barrier is not None):
            ctx = self._packers.context
            if ctx is None:
                ctx = self._packers.context = LaunchContext()
            ctx.block_idx, ctx.block_num, ctx.subblock_idx = block_idx, block_num, subblock_idx
            ctx.subblock_num = 2
            ctx.pipes = None if pipes is None else pipes.handle
            ctx.pipe_api = None if pipes is None else ctypes.pointer(_runtime_pipe_api())
            ctx.barrier = None if barrier is None else barrier.handle
        self.launch(args, ctx)

    def save(self, path: str) -> None:
        """Persist as a shared library at `path` plus `path + ".json"` (both atomic)."""
        if self._engine is not None:
            from .mlir import save_shared_object

            save_shared_object(self._engine, path, f"kernel {self.name!r}")
        elif self._library is not None:
            tmp = path + ".tmp"
            shutil.copyfile(self._library, tmp)
            os.replace(tmp, path)
        else:
            raise KernelCompileError(f"kernel {self.name!r} has no code to save")
        meta = {"name": self.name, "symbol": self._native.fn_name,
                "signature": _signature_json(self.signature), "mlir_text": self.mlir_text,
                "check_sites": [c.to_json() for c in self.check_sites],
                "syncall_sites": [c.to_json() for c in self.syncall_sites]}
        tmp = path + ".json.tmp"
        with open(tmp, "w") as f:
            json.dump(meta, f)
        os.replace(tmp, path + ".json")

    def __repr__(self) -> str:
        return f"<Kernel {self.name}{self.signature.describe()}>"


_PIPE_API: list = []


def _runtime_pipe_api():
    """The runtime's pipe functions (the runtime owns the ring buffers; see `abi.PipeApi`)."""
    if not _PIPE_API:
        from ...runtime.pipes import symbol_addresses

        _PIPE_API.append(PipeApi.from_addresses(symbol_addresses()))
    return _PIPE_API[0]


def _runtime_syncall() -> int:
    """Address of the runtime's barrier function (`abi.py`, *Barriers*)."""
    from ...runtime.barriers import syncall_address

    return syncall_address()


def compile_kernel(function: pir.Function, device: Device | None = None, *,
                   external_source: str | None = None) -> Kernel:
    """Compile a core function of lowered IR to native code for `device.isa` (default
    `Isa.default()`); the CPU backend's code does not depend on the chip's geometry. A
    function that has not been through the pass pipeline gets its fusion decisions
    (`FuseTileOps`) here."""
    source = external_source or function.attrs.get("external_source")
    if source:
        return compile_external(function, source, device.isa if device is not None else Isa.default())
    from . import isa as kernel_isa
    from . import mlir
    from .lower import build_module

    function = FuseTileOps().run_on_function(function, None)  # a no-op on pipeline output
    target = device.isa if device is not None else Isa.default()
    what = f"kernel {function.name!r} ({target.spec()})"
    sites: list[CheckSite] = []
    barriers: list[SyncSite] = []
    with mlir.new_context(), mlir.ir.Location.unknown(), kernel_isa.using(target):
        module = build_module(function, sites, barriers)
        text = str(module)
        mlir.verify(module, what)
        native, library = mlir.compile_native(module, function.name, what, target)
    engine = None if library is not None else native.owner
    return Kernel(function.name, kernel_signature(function), native, text, engine=engine, library=library,
                  check_sites=sites, syncall_sites=barriers)


def load_kernel(path: str) -> Kernel:
    """Load a kernel saved with `Kernel.save` (no compilation)."""
    with open(path + ".json") as f:
        meta = json.load(f)
    native = load_shared_object(path, meta["symbol"])
    return Kernel(meta["name"], _signature_from_json(meta["signature"]), native, meta["mlir_text"],
                  library=path, check_sites=[CheckSite.from_json(c) for c in meta.get("check_sites", ())],
                  syncall_sites=[SyncSite.from_json(c) for c in meta.get("syncall_sites", ())])


def compile_external(function: pir.Function, source: str, target: Isa) -> Kernel:
    """Compile a user C/C++ kernel for `target` behind the same ABI (see module docstring for
    flags)."""
    if not os.path.isfile(source):
        raise KernelCompileError(f"function {function.name!r}: external_source {source!r} not found")
    is_c = source.endswith(".c")
    compiler, flags = ("cc", EXTERNAL_C_FLAGS) if is_c else ("c++", EXTERNAL_CXX_FLAGS)
    fd, lib = tempfile.mkstemp(prefix=f"{function.name}-", suffix=".so", dir=scratch().sub("external").path)
    os.close(fd)
    with open(source) as f:
        text = f.read()
    signature = kernel_signature(function)
    with tempfile.TemporaryDirectory(prefix="plang-ext-") as build_dir:
        with open(os.path.join(build_dir, "plang_kernel.h"), "w") as f:
            f.write(C_HEADER)
        if not is_c and uses_reference_abi(text):
            try:
                wrapper = write_reference_entry(build_dir, signature, packed_symbol(function.name))
            except ValueError as e:
                raise KernelCompileError(f"function {function.name!r}: {e}") from None
        else:
            wrapper = os.path.join(build_dir, "plang_entry.c")
            with open(wrapper, "w") as f:
                f.write(_ENTRY_WRAPPER.format(fn=function.name, packed=packed_symbol(function.name)))
        res = subprocess.run([compiler, *flags, *target.compiler_flags, f"-I{build_dir}", "-o", lib, source,
                              wrapper],
                             capture_output=True, text=True)
    if res.returncode != 0:
        os.unlink(lib)
        raise KernelCompileError(f"function {function.name!r}: compiling {source} failed:\n{res.stderr}")
    native = load_shared_object(lib, function.name)
    return Kernel(function.name, signature, native, text, library=lib)


def _signature_json(sig: Signature) -> list:
    return [{"kind": "tensor", "name": a.name, "rank": a.rank, "dtype": a.dtype.name}
            if isinstance(a, TensorArg) else {"kind": "scalar", "name": a.name, "dtype": a.dtype.name}
            for a in sig.args]


def _signature_from_json(items: list) -> Signature:
    return Signature(tuple(TensorArg(i["name"], i["rank"], DataType.from_name(i["dtype"]))
                           if i["kind"] == "tensor" else ScalarArg(i["name"], DataType.from_name(i["dtype"]))
                           for i in items))
