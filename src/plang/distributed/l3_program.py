"""An L3 `@pl.program`: a HOST-level Orchestrator and SubWorkers over the chip program its
other functions form, as `ir.compile(program, distributed_config=...)` builds it.

Every rank runs the orchestrator's body, as `@pl.jit.host` bodies run: its statements are the
program's torch reference (`plang.codegen.torch_ref`; loops, branches, slices of host tensors,
scalar arithmetic), its window ops the rank runtime's, and each call goes through
`rt.dispatch`. A call of an Orchestration function with `device=r` runs that entry of the
chip program on rank r only (natively, compiled once per entry; as its torch reference with
the rank runtime when the chip program's kernels communicate), and what it writes into an Out
/ InOut host tensor reaches every rank when the body ends. A call of a SubWorker runs its
callback — bound with ``compiled.prepare(callbacks={name: fn})``; a SubWorker declared with a
``...`` body must be bound — with the list of its arguments, else its body.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import torch

from ..codegen.torch_ref import function_names, load_torch_ref
from ..codegen.torch_ref_pld import bind_pld
from ..errors import UnsupportedConstructError
from ..ir.enums import Level, ParamDirection, Role
from ..ir.function import Function, Program
from ..runtime import DeviceTensor, ParamSpec
from ..runtime.compiled import with_outputs
from .host import dispatch_rank, uses_pld
from .runtime import DistributedError


def host_orchestrator(program: Program) -> Function | None:
    """The program's HOST-level Orchestrator, if it has one."""
    return next((f for f in program.functions.values()
                 if f.level is Level.HOST and f.role is Role.Orchestrator), None)


class L3Host:
    """The host side of an L3 program, run by `RankRunner` like a `@pl.jit.host` body."""

    def __init__(self, program: Program, compile_chip: Callable[[Program, str, int | None], Any],
                 signature: Sequence[ParamSpec] = ()) -> None:
        self.program = program
        self.signature = signature  # the orchestrator's: a return-style call's Out tensors
        self.entry = host_orchestrator(program)
        if self.entry is None:
            raise ValueError(f"program {program.name!r} has no HOST-level Orchestrator function")
        self.name = self.entry.name
        functions = program.functions.values()
        self._chip = program.with_functions([f for f in functions if f.level is not Level.HOST])
        self._compile_chip = compile_chip
        self._compiled: dict[str, Any] = {}
        subs = [f for f in program.functions.values() if f.role is Role.SubWorker]
        self.sub_workers = tuple(f.name for f in subs)
        self.runtime_bound = tuple(f.name for f in subs if f.requires_runtime_binding)

    def with_outputs(self, args: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[torch.Tensor, ...] | None]:
        """`args` with fresh Out tensors where only the other arguments are given."""
        return with_outputs(self.name, self.signature, args)

    @functools.cached_property
    def _reference(self) -> dict[str, Any]:
        return load_torch_ref(self.program)

    @functools.cached_property
    def _communicates(self) -> bool:
        return uses_pld(self._chip)

    def rank_body(self, ops: Any, dispatches: list, callbacks: dict[str, Callable[..., Any]]) -> Callable:
        entry = self._reference[function_names(self.program)[self.name]]
        dispatcher = functools.partial(self._dispatch, ops, dispatches, callbacks)

        def body(*args: Any) -> Any:
            if len(args) != len(self.entry.params):
                raise TypeError(f"{self.name} takes {len(self.entry.params)} arguments, got {len(args)}")
            bind_pld(ops, dispatcher)
            return entry(*args)

        return body

    def _dispatch(self, ops: Any, dispatches: list, callbacks: dict, fn: Callable, name: str,
                  device: Any, args: tuple) -> Any:
        """`rt.dispatch` on this rank: the host body's call of function `name` (generated as
        `fn`) with `device=`."""
        callee = self.program.get(name)
        if callee.role is Role.SubWorker:
            return self._sub_worker(callee, fn, list(args), callbacks)
        if callee.level is Level.HOST:
            raise UnsupportedConstructError(f"L3 orchestrator {self.name!r} calls HOST function "
                                            f"{name!r} (role {callee.role}): only chip entries and "
                                            f"SubWorkers are dispatched")
        rank = dispatch_rank(ops, dispatches, name, device, callee.param_directions, args)
        if rank != ops.rank:
            return _outputs(callee, args)
        if self._communicates:  # native kernels do not call the rank runtime: run the reference
            result = fn(*args)
        else:
            compiled = self._compiled.get(name)
            if compiled is None:
                own_folder = rank if ops.nranks > 1 else None  # each rank's artefacts apart
                compiled = self._compiled[name] = self._compile_chip(self._chip, name, own_folder)
            result = compiled(*args)
        return result if result is not None else _outputs(callee, args)

    def _sub_worker(self, fn: Function, body: Callable, args: list, callbacks: dict) -> None:
        callback = callbacks.get(fn.name)
        if callback is not None:
            callback(args)
            return None
        if fn.requires_runtime_binding:
            raise DistributedError(f"SubWorker {fn.name!r} is runtime-bound (declared with a `...` body) "
                                   f"and was dispatched unbound: bind it with "
                                   f"compiled.prepare(callbacks={{{fn.name!r}: fn}})")
        body(*args)
        return None


def _outputs(fn: Function, args: tuple) -> Any:
    """What a call of chip entry `fn` that returned nothing evaluates to: its Out / InOut arguments."""
    outs = [a for a, d in zip(args, fn.param_directions) if d in (ParamDirection.Out, ParamDirection.InOut)]
    return outs[0] if len(outs) == 1 else tuple(outs) or None


def tensor_from_continuous(value: Any) -> torch.Tensor:
    """A SubWorker callback's argument as a torch tensor (the reference passes its own
    contiguous-tensor handles; here the arguments are the tensors)."""
    if isinstance(value, DeviceTensor):
        return value.torch()
    if isinstance(value, torch.Tensor):
        return value
    raise TypeError(f"expected a tensor argument, got {type(value).__name__}")
