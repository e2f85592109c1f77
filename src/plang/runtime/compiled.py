"""`CompiledProgram`: what the compiler hands the runtime.

- ``kernels``: name -> kernel object. A kernel is called with torch CPU tensors and Python
  scalars plus the launch keywords of `plang.runtime.scheduler` (``block_idx``/``block_num``
  for SPMD tasks; ``pipes``/``subblock_idx`` for Group members). An optional ``load()``
  method is called once when a `ChipWorker` registers the program.
- ``orchestration``: ``fn(rt, *args)``, the task program (see `codegen.orchestration`);
  ``rt`` is an `Orchestrator`. It returns the program's result.
- ``signature``: a `ParamSpec` per parameter, checked before anything runs.
- ``source``: the orchestration's Python source, for reading.
- ``output_dir``: the folder (a `Path`) of its artefacts (`plang.runtime.artefacts`); a
  compiler may defer writing them until it is first asked for (None: it has none). A compiled
  program with one is path-like, as the reference's is; `CompiledProgram.from_dir` loads one
  back.

Called with only its non-Out arguments (the reference's return style), it allocates the Out
tensors (zero-filled, static shapes only) and returns them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from ..dtypes import DataType
from ..ir.enums import ParamDirection
from .chip_callable import (
    RUNTIME_NAME,
    CallConfig,
    ChipCallable,
    OrchArgs,
    build_call_config,
    build_orch_args,
    runtime_config,
)
from .device_tensor import DeviceTensor
from .direct_launch import DirectLaunch, find
from .param_spec import ParamSpec


def with_outputs(name: str, signature: Sequence[ParamSpec], args: Sequence[Any]
                 ) -> tuple[tuple[Any, ...], tuple[torch.Tensor, ...] | None]:
    """`args` completed with fresh Out tensors when they are exactly the non-Out arguments of
    `signature` (return style), and those tensors (None for a full argument list)."""
    if len(args) == len(signature):
        return tuple(args), None
    outs = [i for i, p in enumerate(signature) if p.direction is ParamDirection.Out]
    if not outs or len(args) != len(signature) - len(outs):
        return tuple(args), None
    given = iter(args)
    full, allocated = [], []
    for i, spec in enumerate(signature):
        if i not in outs:
            full.append(next(given))
            continue
        if spec.shape is None or not all(isinstance(d, int) for d in spec.shape):
            raise ValueError(f"{name}: can not allocate output {spec.name!r} of shape "
                             f"{list(spec.shape or ())}: pass every tensor (in-place style)")
        allocated.append(torch.zeros(spec.shape, dtype=spec.dtype.to_torch()))
        full.append(allocated[-1])
    return tuple(full), tuple(allocated)


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
        self.core_types: dict[str, str] = {}  # kernel -> "aic" / "aiv"
        self.platform = "cpu"  # the platform it was compiled for
        self._output_dir: Path | None = None
        self._artefact_writer: Callable[[], None] | None = None
        self._chip_callable: ChipCallable | None = None

    @classmethod
    def from_dir(cls, output_dir: str | os.PathLike, platform: str | None = None) -> CompiledProgram:
        """The program of a build folder (``plang.ir.compile(..., output_dir=...)``), without
        recompiling; `platform` overrides the saved one."""
        from .artefacts import load_program

        return load_program(cls, output_dir, platform)

    def defer_artefacts(self, writer: Callable[[], None]) -> None:
        """Have `writer` write the artefacts (and set `output_dir`) when they are first needed."""
        self._artefact_writer = writer

    def write_artefacts(self) -> Path | None:
        """Write the deferred artefacts now (once); returns `output_dir`."""
        writer, self._artefact_writer = self._artefact_writer, None
        if writer is not None and self._output_dir is None:
            writer()
        return self._output_dir

    @property
    def chip_callable(self) -> ChipCallable:
        """What a `simpler.worker.Worker` registers (one object per program)."""
        if self._chip_callable is None:
            self._chip_callable = ChipCallable(self)
        return self._chip_callable

    @property
    def runtime_name(self) -> str:
        return RUNTIME_NAME

    @property
    def runtime_config(self) -> dict[str, Any]:
        return runtime_config(self)

    def build_call_config(self, config: Any = None, *, aicpu_thread_num: int | None = None) -> CallConfig:
        """The `CallConfig` of a manual run (see `plang.runtime.chip_callable`)."""
        return build_call_config(self, config, aicpu_thread_num)

    def build_orch_args(self, *args: Any, worker: Any = None) -> tuple[OrchArgs, list[Any], bool]:
        """(orch_args for ``worker.run``, the full argument list, return style)."""
        return build_orch_args(self, args, worker)

    @property
    def output_dir(self) -> Path | None:
        return self.write_artefacts()

    @output_dir.setter
    def output_dir(self, folder: str | os.PathLike | None) -> None:
        self._output_dir = None if folder is None else Path(folder)

    @property
    def param_names(self) -> list[str]:
        """The orchestration's parameter names, in order."""
        return [p.name for p in self.signature]

    @property
    def output_indices(self) -> list[int]:
        """Positions of the `pl.Out` parameters: the ones a return-style call allocates."""
        return [i for i, p in enumerate(self.signature) if p.direction is ParamDirection.Out]

    @property
    def direct_launch(self) -> DirectLaunch | None:
        """The one SPMD kernel launch this program amounts to, if it is nothing else
        (`plang.runtime.direct_launch`; memoized)."""
        if "_direct" not in self.__dict__:
            self._direct = find(self.source, self.name, self.kernels) if self.source else None
        return self._direct

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
        return with_outputs(self.name, self.signature, args)

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
            if final is not target and isinstance(final, torch.Tensor) and not _same_buffer(final, target):
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
        for spec, value, quick in zip(self.signature, args, self._quick_checks()):
            if (quick is not None and type(value) is torch.Tensor and value.dtype is quick[0]
                    and value.shape == quick[1] and value.is_cpu):
                continue  # what `_check_tensor` would accept, in four attribute reads
            if spec.is_tensor:
                _check_tensor(self.name, spec, value, dims)
            elif isinstance(value, (torch.Tensor, DeviceTensor, np.ndarray)):
                raise TypeError(f"{self.name}: parameter {spec.name!r} is a scalar "
                                f"({spec.dtype}), got a tensor")
        return dims

    def _quick_checks(self) -> tuple[tuple[torch.dtype, tuple[int, ...]] | None, ...]:
        """Per parameter, (torch dtype, shape) of a tensor argument that passes its check
        as is: a tensor parameter with a static shape (None: check it in full)."""
        quick = self.__dict__.get("_quick")
        if quick is None:
            quick = self._quick = tuple(map(_quick_check, self.signature))
        return quick

    def __call__(self, *args: Any, config: Any = None) -> Any:
        from .worker import ChipWorker

        return ChipWorker.for_call(config).run(self, *args)

    def validate_ir(self, tensors: Mapping[str, torch.Tensor], expected: Mapping[str, torch.Tensor],
                    *, rtol: float = 5e-2, atol: float = 5e-2) -> dict[str, dict[str, float]]:
        """Run the torch reference of every pass IR in ``<output_dir>/passes_dump`` and compare
        the tensors of `expected` after each (`plang.debug.validate_pass_ir_codegen_results`)."""
        from ..codegen.torch_ref_validation import validate_pass_ir_codegen_results

        dump = None if self.output_dir is None else self.output_dir / "passes_dump"
        if dump is None or not dump.is_dir():
            raise FileNotFoundError(f"{self.name}: no passes_dump/ under {self.output_dir}; compile "
                                    "with dump_passes=True to check each pass")
        return validate_pass_ir_codegen_results(dump, tensors, expected, rtol=rtol, atol=atol)

    def __fspath__(self) -> str:
        if self.output_dir is None:
            raise TypeError(f"{self.name}: it has no artefacts (a program restored from plang's "
                            "disk cache or built for distributed ranks)")
        return str(self.output_dir)

    def __str__(self) -> str:
        return str(self._output_dir) if self._output_dir is not None else repr(self)

    def __repr__(self) -> str:
        return f"<CompiledProgram {self.name} kernels={sorted(self.kernels)}>"


def _quick_check(spec: ParamSpec) -> tuple[torch.dtype, tuple[int, ...]] | None:
    if not spec.is_tensor or not all(isinstance(d, int) for d in spec.shape):
        return None
    try:
        return spec.dtype.to_torch(), tuple(spec.shape)
    except TypeError:  # no torch counterpart: the full check says what it takes
        return None


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
