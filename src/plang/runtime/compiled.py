"""`CompiledProgram`: what the compiler hands the runtime.

- ``kernels``: name -> kernel object. A kernel is called with torch CPU tensors and Python
  scalars plus the launch keywords of `plang.runtime.scheduler` (``block_idx``/``block_num``
  for SPMD tasks; ``pipes``/``subblock_idx`` for Group members). An optional ``load()``
  method is called once when a `ChipWorker` registers the program.
- ``orchestration``: ``fn(rt, *args)``, the task program (see `codegen.orchestration`);
  ``rt`` is an `Orchestrator`. It returns the program's result.
- ``signature``: a `ParamSpec` per parameter, checked before anything runs.
- ``source``: the orchestration's Python source, for reading.
- ``output_dir``: the folder its artefacts were written to (None: none written); a compiled
  program with one is path-like, as the reference's is.

Called with only its non-Out arguments (the reference's return style), it allocates the Out
tensors (zero-filled, static shapes only) and returns them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from ..dtypes import DataType
from ..ir.enums import ParamDirection
from .device_tensor import DeviceTensor


@dataclass(frozen=True)
class ParamSpec:
    """One program parameter: a tensor (static ints or dynamic-dim names) or a scalar."""

    name: str
    dtype: DataType
    shape: tuple[int | str, ...] | None = None  # None: a scalar
    direction: ParamDirection = ParamDirection.In

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None


class CompiledProgram:
    """A compiled program: kernels, an orchestration task program and its signature.
    Calling it runs it on the current `ChipWorker` (or a default one)."""

    def __init__(self, name: str, signature: Sequence[ParamSpec],
                 orchestration: Callable[..., Any], kernels: Mapping[str, Any],
                 source: str = "", program: Any = None) -> None:
        self.name = name
        self.signature = tuple(signature)
        self.orchestration = orchestration
        self.kernels = dict(kernels)
        self.source = source
        self.program = program
        self.result_arity = -1  # results the caller gets back (-1: the orchestration's result as is)
        self.writebacks: tuple[tuple[int, int], ...] = ()  # (result position, Out/InOut param index)
        self.output_dir: str | None = None

    @property
    def param_names(self) -> list[str]:
        """The orchestration's parameter names, in order."""
        return [p.name for p in self.signature]

    @property
    def output_indices(self) -> list[int]:
        """Positions of the `pl.Out` parameters: the ones a return-style call allocates."""
        return [i for i, p in enumerate(self.signature) if p.direction is ParamDirection.Out]

    @property
    def has_return(self) -> bool:
        """Whether the orchestration returns values."""
        if self.result_arity >= 0:
            return self.result_arity > 0
        entry = self.program.functions.get(self.name) if self.program is not None else None
        return bool(entry is not None and entry.return_types)

    def with_outputs(self, args: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[torch.Tensor, ...] | None]:
        """`args` completed with fresh Out tensors when they are exactly the non-Out
        arguments (return style), and those tensors (None for a full argument list)."""
        outs = self.output_indices
        if not outs or len(args) == len(self.signature) or len(args) != len(self.signature) - len(outs):
            return tuple(args), None
        given = iter(args)
        full, allocated = [], []
        for i, spec in enumerate(self.signature):
            if i not in outs:
                full.append(next(given))
                continue
            if spec.shape is None or not all(isinstance(d, int) for d in spec.shape):
                raise ValueError(f"{self.name}: can not allocate output {spec.name!r} of shape "
                                 f"{list(spec.shape or ())}: pass every tensor (in-place style)")
            allocated.append(torch.zeros(spec.shape, dtype=spec.dtype.to_torch()))
            full.append(allocated[-1])
        return tuple(full), tuple(allocated)

    def finish_result(self, result: Any, args: Sequence[Any]) -> Any:
        """Write each Out / InOut tensor's final value into the caller's tensor when the
        program left it in another buffer, then give back the caller's part of the result
        (the caller's own tensor wherever an output is returned)."""
        if self.result_arity < 0:
            return result
        values = result if isinstance(result, tuple) else (result,)
        outputs = dict(self.writebacks)
        for position, index in self.writebacks:
            final, target = values[position], args[index]
            target = target.torch() if isinstance(target, DeviceTensor) else target
            if isinstance(final, torch.Tensor) and not _same_buffer(final, target):
                target.copy_(final)
        user = tuple(args[outputs[i]] if i in outputs else values[i] for i in range(self.result_arity))
        if not user:
            return None
        return user[0] if len(user) == 1 else user

    def written_params(self) -> tuple[str, ...]:
        """The Out / InOut parameters: what a failed run may have left partially written."""
        return tuple(p.name for p in self.signature
                     if p.is_tensor and p.direction in (ParamDirection.Out, ParamDirection.InOut))

    def check_args(self, args: Sequence[Any]) -> dict[str, int]:
        """Validate arguments against the signature; returns the dynamic dims' values."""
        if len(args) != len(self.signature):
            names = ", ".join(p.name for p in self.signature)
            raise TypeError(f"{self.name}() takes {len(self.signature)} arguments ({names}), "
                            f"got {len(args)}")
        dims: dict[str, int] = {}
        for spec, value in zip(self.signature, args):
            if spec.is_tensor:
                _check_tensor(self.name, spec, value, dims)
            elif isinstance(value, (torch.Tensor, DeviceTensor, np.ndarray)):
                raise TypeError(f"{self.name}: parameter {spec.name!r} is a scalar "
                                f"({spec.dtype}), got a tensor")
        return dims

    def __call__(self, *args: Any, config: Any = None) -> Any:
        from .worker import ChipWorker

        return ChipWorker.for_call(config).run(self, *args)

    def __fspath__(self) -> str:
        if self.output_dir is None:
            raise TypeError(f"{self.name}: no artefacts were written (compile with save_kernels=True "
                            "or through plang.ir.compile)")
        return self.output_dir

    def __str__(self) -> str:
        return self.output_dir if self.output_dir is not None else repr(self)

    def __repr__(self) -> str:
        return f"<CompiledProgram {self.name} kernels={sorted(self.kernels)}>"


def _same_buffer(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride())


def _check_tensor(program: str, spec: ParamSpec, value: Any, dims: dict[str, int]) -> None:
    if isinstance(value, DeviceTensor):
        value = value.torch()
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{program}: parameter {spec.name!r} expects a tensor, got {type(value).__name__}")
    if value.device.type != "cpu":
        raise TypeError(f"{program}: parameter {spec.name!r} must be a CPU tensor, got device {value.device}")
    got = DataType.from_torch(value.dtype)
    if not spec.dtype.accepts_storage(got):
        raise TypeError(f"{program}: parameter {spec.name!r} expects dtype {spec.dtype}, got {got}")
    shape = tuple(value.shape)
    if len(shape) != len(spec.shape):
        raise ValueError(f"{program}: parameter {spec.name!r} expects shape {list(spec.shape)}, "
                         f"got {list(shape)}")
    for want, have in zip(spec.shape, shape):
        if isinstance(want, str):  # each tensor carries its own extent (as the reference's
            name, _, k = want.partition("*")  # runtime tensors do): a dynamic dim is not cross-checked
            if k and have % int(k):
                raise ValueError(f"{program}: parameter {spec.name!r} dim {want} must be a multiple of "
                                 f"{k}, got {have}")
            dims.setdefault(name, have // int(k or 1))
            continue
        if want != have:
            expected = [dims.get(d, d) if isinstance(d, str) else d for d in spec.shape]
            raise ValueError(f"{program}: parameter {spec.name!r} expects shape {expected}, "
                             f"got {list(shape)}")
