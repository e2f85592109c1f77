"""An L3 `@pl.program`: a HOST-level Orchestrator and SubWorkers over the chip program its
other functions form, as `ir.compile(program, distributed_config=...)` builds it.

The orchestrator's body runs on the rank as a sequence of assignments, calls and a return:
a call of an Orchestration function runs that entry of the chip program (compiled once per
entry), a call of a SubWorker runs its callback — bound with
``compiled.prepare(callbacks={name: fn})``; a SubWorker declared with a ``...`` body must be
bound — with the list of its arguments. Loops and other statements in an L3 orchestrator
are `@pl.jit.host` territory: they raise `UnsupportedConstructError` naming the statement.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..errors import UnsupportedConstructError
from ..ir.enums import Level, ParamDirection, Role
from ..ir.expr import Call, ConstFloat, ConstInt, GlobalVar, Var
from ..ir.function import Function, Program
from ..ir.stmt import Assign, Eval, Return, Scope, SeqStmts, Stmt
from ..runtime import DeviceTensor
from .runtime import DistributedError


def host_orchestrator(program: Program) -> Function | None:
    """The program's HOST-level Orchestrator, if it has one."""
    return next((f for f in program.functions.values()
                 if f.level is Level.HOST and f.role is Role.Orchestrator), None)


class L3Host:
    """The host side of an L3 program, run by `RankRunner` like a `@pl.jit.host` body."""

    def __init__(self, program: Program, compile_chip: Callable[[Program, str], Any]) -> None:
        self.program = program
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

    def rank_body(self, ops: Any, dispatches: list, callbacks: dict[str, Callable[..., Any]]) -> Callable:
        if ops.nranks > 1:
            raise DistributedError(f"{self.name}: an L3 @pl.program runs on one rank here; write a "
                                   f"multi-rank host orchestrator as @pl.jit.host")
        return lambda *args: self._run(self.entry, list(args), callbacks)

    # ------------------------------------------------------------ the orchestrator's body
    def _run(self, fn: Function, args: list, callbacks: dict) -> Any:
        if len(args) != len(fn.params):
            raise TypeError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
        env: dict[Var, Any] = dict(zip(fn.params, args))
        return self._stmt(fn.body, env, callbacks)

    def _stmt(self, s: Stmt, env: dict, callbacks: dict) -> Any:
        """Run `s`; a `Return`'s values come back as a `_Returned`."""
        if isinstance(s, SeqStmts):
            for inner in s.stmts:
                done = self._stmt(inner, env, callbacks)
                if isinstance(done, _Returned):
                    return done
            return None
        if isinstance(s, Scope):
            return self._stmt(s.body, env, callbacks)
        if isinstance(s, Assign):
            env[s.var] = self._expr(s.value, env, callbacks)
            return None
        if isinstance(s, Eval):
            self._expr(s.expr, env, callbacks)
            return None
        if isinstance(s, Return):
            return _Returned([self._expr(v, env, callbacks) for v in s.values])
        raise self._unsupported(s, f"a {type(s).__name__} statement")

    def _expr(self, e: Any, env: dict, callbacks: dict) -> Any:
        if isinstance(e, Var) and e in env:
            return env[e]
        if isinstance(e, (ConstInt, ConstFloat)):
            return e.value
        if not (isinstance(e, Call) and isinstance(e.op, GlobalVar)):
            raise self._unsupported(e, f"the expression {type(e).__name__}")
        callee = self.program.get(e.op.name)
        args = [self._expr(a, env, callbacks) for a in e.args]
        if callee.role is Role.SubWorker:
            return self._sub_worker(callee, args, callbacks)
        if callee.level is Level.HOST:
            raise self._unsupported(e, f"a call of HOST function {callee.name!r} (role {callee.role})")
        device = (e.kwargs or {}).get("device")
        if device is not None and self._expr(device, env, callbacks) != 0:
            raise self._unsupported(e, f"a dispatch to device {self._expr(device, env, callbacks)}")
        compiled = self._compiled.get(callee.name)
        if compiled is None:
            compiled = self._compiled[callee.name] = self._compile_chip(self._chip, callee.name)
        result = compiled(*args)
        return result if result is not None else _outputs(callee, args)

    def _sub_worker(self, fn: Function, args: list, callbacks: dict) -> None:
        callback = callbacks.get(fn.name)
        if callback is not None:
            callback(args)
            return None
        if fn.requires_runtime_binding:
            raise DistributedError(f"SubWorker {fn.name!r} is runtime-bound (declared with a `...` body) "
                                   f"and was dispatched unbound: bind it with "
                                   f"compiled.prepare(callbacks={{{fn.name!r}: fn}})")
        self._run(fn, args, callbacks)
        return None

    def _unsupported(self, node: Any, what: str) -> UnsupportedConstructError:
        span = getattr(node, "span", None)
        return UnsupportedConstructError(f"{what} in L3 orchestrator {self.name!r}", span,
                                         hint="an L3 @pl.program's HOST functions run assignments, calls "
                                              "and a return here; write the rest as a @pl.jit.host body")


class _Returned(list):
    """The values of a `Return` reached in a body."""


def _outputs(fn: Function, args: list) -> Any:
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
