"""Host-side ops of an orchestration function, as the Python the generated task program runs
(`w` is the function writer: `w.expr` renders an operand, `w.deps` a ``deps=`` tuple):
``tensor.create`` / ``tensor.full`` (new DDR tensors), ``tensor.read`` / ``tensor.write`` (one
element, after the tasks touching it), ``tensor.slice`` / ``tensor.reshape`` (views),
``tensor.transpose`` (a copy), ``tensor.assemble`` (a copy into a window of the target, after
the tasks touching both), ``tensor.dim``, ``array.*`` (tuples; a TaskId array starts as Nones,
which ``deps=`` skips) and the ``system`` task / core-count queries."""

from __future__ import annotations

from typing import Any

from ..ir import expr as E
from ..ir.enums import AtomicType


def host_op(w: Any, call: E.Call, env: dict[E.Var, str] | None) -> str:
    """The Python expression computing `call` in the generated orchestration."""
    name, args = call.op.name, call.args
    if name == "tensor.create":
        dtype = call.kwargs["dtype"].name
        return f"rt.create_tensor({w.expr(args[0], env)}, DataType.from_name({dtype!r}))"
    if name == "tensor.read":
        return f"rt.read({w.expr(args[0], env)}, {w.expr(args[1], env)}, {call.span.fields!r})"
    if name == "tensor.write":
        return f"rt.write({', '.join(w.expr(a, env) for a in args[:3])}, {call.span.fields!r})"
    if name == "tensor.full":
        dtype = call.kwargs["dtype"].name
        return (f"rt.create_tensor({w.expr(args[0], env)}, DataType.from_name({dtype!r}), "
                f"fill={w.expr(args[1], env)})")
    if name == "array.create":
        empty = "None" if call.kwargs["dtype"].name == "TASK_ID" else "0"
        return f"({empty},) * {int(call.kwargs['extent'])}"
    if name == "array.get_element":
        return f"{w.expr(args[0], env)}[{w.expr(args[1], env)}]"
    if name == "array.update_element":  # functional: a new array value
        arr, index, value = (w.expr(a, env) for a in args)
        return f"_array_set({arr}, {index}, {value})"
    if name == "tensor.slice":  # a view (the valid shape is kernel-side metadata only)
        drop = tuple(int(d) for d in call.kwargs.get("drop_dims") or ())
        valid = w.expr(call.kwargs["valid_shape"], env) if call.kwargs.get("valid_shape") else None
        return (f"rt.view({', '.join(w.expr(a, env) for a in args[:3])}, {drop!r}, {valid}, "
                f"{bool(call.kwargs.get('clamp'))}, {call.span.fields!r})")
    if name == "tensor.reshape":  # a view of a contiguous tensor (ChipTensor::reshape)
        return f"rt.reshape({w.expr(args[0], env)}, {w.expr(args[1], env)})"
    if name == "tensor.transpose":  # a transposed copy, once its writers are done
        return (f"rt.transpose({w.expr(args[0], env)}, {int(call.kwargs['axis1'])}, "
                f"{int(call.kwargs['axis2'])})")
    if name == "tensor.dim":
        return f"{w.expr(args[0], env)}.shape[{int(call.kwargs['axis'])}]"
    if name == "tensor.assemble":  # a copy into the target, once the tensors' tasks are done
        atomic = call.kwargs.get("atomic") is AtomicType.Add
        operands = ", ".join(w.expr(a, env) for a in args[:3])
        return f"rt.assemble({operands}, {atomic}, {call.span.fields!r})"
    if name == "system.task_invalid":
        return "None"
    if name == "system.task_dummy":
        return f"rt.task_dummy({w.deps(call.kwargs['deps'], env)})"
    if name == "system.available_cluster_count":
        return "rt.device.clusters"
    if name == "system.available_aiv_count":
        return "rt.device.aiv_count"
    raise w.fail(call, f"op {name} can not run in orchestration; put it inside a "
                    "pl.at(level=pl.Level.CORE_GROUP) scope")
