"""`IncoreKernel`: a plang ``@pl.jit.incore`` function as a Worker's kernel.

Called with torch tensors (acquired fifo objects), it specializes for their shapes through a
generated ``@pl.jit`` entry that calls the function once, compiles it (plang's own JIT and
caches) and from then on launches the compiled kernel directly on the calling thread."""

from __future__ import annotations

import hashlib
import importlib.util
import threading
import time
from typing import Any

import torch

from .. import cache_root
from ..ir.enums import ParamDirection
from ..jit.function import JITFunction
from . import state

_ENTRY = '''import plang as pl


def {entry}({params}):
    {outs} = {name}({args})
    return {outs}
'''


class IncoreKernel:
    """A ``@pl.jit.incore`` function callable with tensors from a core body."""

    def __init__(self, fn: JITFunction) -> None:
        if not isinstance(fn, JITFunction) or fn.kind != "incore":
            raise TypeError(f"IncoreKernel takes a @pl.jit.incore function, got {fn!r}")
        self.fn, self.name = fn, fn.name
        self._kernels: dict[tuple, Any] = {}
        self._entry: JITFunction | None = None
        self._lock = threading.Lock()

    def _make_entry(self) -> JITFunction:
        specs = self.fn.source.params
        if not specs or any(p.kind != "tensor" for p in specs):
            raise TypeError(f"{self.name}: a Worker kernel takes tensors only")
        outs = [p.name for p in specs if p.direction is not ParamDirection.In]
        if not outs:
            raise TypeError(f"{self.name}: an incore Worker kernel needs a pl.Out / pl.InOut tensor")
        wrap = {ParamDirection.In: "pl.Tensor", ParamDirection.Out: "pl.Out[pl.Tensor]",
                ParamDirection.InOut: "pl.InOut[pl.Tensor]"}
        entry = f"iron_entry_{self.name}"
        text = _ENTRY.format(entry=entry, name=self.name, outs=", ".join(outs),
                             args=", ".join(p.name for p in specs),
                             params=", ".join(f"{p.name}: {wrap[p.direction]}" for p in specs))
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        path = cache_root.scratch().sub("iron").path / f"{entry}_{digest}.py"
        if not path.exists():
            cache_root.write_atomic(path, text.encode())
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        setattr(module, self.name, self.fn)
        spec.loader.exec_module(module)
        return JITFunction(getattr(module, entry), "orchestration")

    def _kernel(self, args: tuple) -> Any:
        key = tuple((tuple(a.shape), a.dtype) for a in args)
        kernel = self._kernels.get(key)
        if kernel is None:
            with self._lock:
                if self._entry is None:
                    self._entry = self._make_entry()
                compiled = self._entry.compile(*args)
                kernel = self._kernels[key] = compiled.kernels[self.name]
        return kernel

    def build(self, *args: Any) -> None:
        """Compile for these example tensors now."""
        self._kernel(args)

    def __call__(self, *args: Any) -> None:
        for a in args:
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"{self.name}: Worker kernels take tensors, got {type(a).__name__}")
        kernel = self._kernel(args)
        run = state.maybe_run()
        if run is None or not run.traced():
            kernel(*args)
            return
        start = time.perf_counter_ns()
        kernel(*args)
        run.record(self.name, start)
