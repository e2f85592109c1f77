"""Programs that are one SPMD kernel launch over their own parameters, run without the
orchestration layer.

Most `@pl.jit` operators compile to an orchestration of exactly this shape::

    def gemm(rt, a, b, c):
        with rt.scope(ScopeMode.AUTO):
            _task1 = rt.submit('gemm_block', (a, b, c, ), (In, In, Out, ), core_num=2)
            c_1 = c
        return c_1

Running it through the orchestration builds an `Orchestrator`, enters the scope, derives
the task's (empty) dependencies, queues it and waits for it. `find` recognizes the shape in
the generated source, and `ChipWorker` then hands the kernel straight to
`Scheduler.launch`: the same launch (natively, `native_spmd`, when the cores are idle), the
same errors, without those layers. Python right after a kernel that swept the caches runs
several times slower than warm (a 1024^3 BF16 GEMM's host path: about 300 us against 60
after a tiny kernel), so every layer counts: alternating calls in one process on a 2-vCPU
Zen 4 VM, the host's share of that GEMM call fell from 530 to 433 us, of a 4096 x 1024
softmax call from 260 to 197 us.

Anything else (a scalar computed on the host, deps, predicates, dumps, a syncall kernel,
two launches) keeps the orchestration path.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Mapping

from ..ir.enums import ParamDirection

_DIRECTIONS = {d.name: d for d in ParamDirection}

@dataclass(frozen=True)
class Literal:
    """A kernel argument the orchestration passes as a constant."""

    value: int | float | bool


@dataclass(frozen=True)
class DirectLaunch:
    """One SPMD launch of `kernel` over `blocks` blocks; `args` are positions in the
    program's parameter list or `Literal`s, `returns` positions (in the program's result
    order, a tuple of them where `many`)."""

    kernel: str
    blocks: int
    args: tuple[int | Literal, ...]
    directions: tuple[ParamDirection, ...]
    returns: tuple[int, ...]
    many: bool

    def kernel_args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The kernel's arguments for the program's arguments `args`."""
        return tuple(a.value if type(a) is Literal else args[a] for a in self.args)

    def result(self, args: tuple[Any, ...]) -> Any:
        """The program's result for these arguments (what its orchestration returns)."""
        if not self.many:
            return args[self.returns[0]] if self.returns else None
        return tuple(args[i] for i in self.returns)


def find(source: str, name: str, kernels: Mapping[str, Any]) -> DirectLaunch | None:
    """The direct launch that orchestration `name` in `source` amounts to, or None."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    fn = next((f for f in module.body if isinstance(f, ast.FunctionDef) and f.name == name), None)
    if fn is None or fn.args.args[:1] == [] or fn.args.args[0].arg != "rt":
        return None
    params = {a.arg: i for i, a in enumerate(fn.args.args[1:])}
    body = list(fn.body)
    if len(body) == 2 and _is_scope(body[0]):
        body = [*body[0].body, body[1]]
    if not body or not isinstance(body[-1], ast.Return):
        return None
    aliases = dict(params)  # name -> parameter position
    launch = None
    for st in body[:-1]:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            return None
        target, value = st.targets[0].id, st.value
        if isinstance(value, ast.Name) and value.id in aliases:
            aliases[target] = aliases[value.id]
        elif launch is None and (found := _submit(value, aliases)) is not None:
            launch = found
        else:
            return None
    value = body[-1].value
    returned = () if value is None else _names(value, aliases)
    if launch is None or returned is None:
        return None
    kernel, blocks, args, directions = launch
    fn_kernel = kernels.get(kernel)
    if fn_kernel is None or getattr(fn_kernel, "syncall_sites", ()):
        return None
    return DirectLaunch(kernel, blocks, args, directions, returned, isinstance(value, ast.Tuple))


def _is_scope(st: ast.stmt) -> bool:
    """``with rt.scope(ScopeMode.AUTO):`` (one task needs no other scope semantics)."""
    if not (isinstance(st, ast.With) and len(st.items) == 1):
        return False
    return _rt_call(st.items[0].context_expr, "scope")


def _rt_call(node: ast.expr, method: str) -> bool:
    """Whether `node` is a call ``rt.<method>(...)``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "rt")


def _submit(value: ast.expr, aliases: dict[str, int]
            ) -> tuple[str, int, tuple[int, ...], tuple[ParamDirection, ...]] | None:
    """(kernel, blocks, argument positions, directions) of ``rt.submit('k', (params, ),
    (dirs, ), core_num=N)`` with nothing else, else None."""
    if not (_rt_call(value, "submit") and len(value.args) == 3):
        return None
    kernel, args, dirs = value.args
    if not (isinstance(kernel, ast.Constant) and isinstance(kernel.value, str)):
        return None
    if [k.arg for k in value.keywords] != ["core_num"]:
        return None
    blocks = value.keywords[0].value
    if not (isinstance(blocks, ast.Constant) and type(blocks.value) is int and blocks.value >= 1):
        return None
    positions = _arguments(args, aliases)
    names = dirs.elts if isinstance(dirs, ast.Tuple) else []
    directions = tuple(_DIRECTIONS.get(n.id) if isinstance(n, ast.Name) else None for n in names)
    if positions is None or len(directions) != len(positions) or None in directions:
        return None
    return kernel.value, blocks.value, positions, directions


def _arguments(node: ast.expr, aliases: dict[str, int]) -> tuple[int | Literal, ...] | None:
    """Parameter positions or number literals of a tuple of them, else None."""
    if not isinstance(node, ast.Tuple):
        return None
    found: list[int | Literal] = []
    for n in node.elts:
        if isinstance(n, ast.Name) and n.id in aliases:
            found.append(aliases[n.id])
            continue
        try:
            value = ast.literal_eval(n)
        except ValueError:
            return None
        if type(value) not in (int, float, bool):
            return None
        found.append(Literal(value))
    return tuple(found)


def _names(node: ast.expr, aliases: dict[str, int]) -> tuple[int, ...] | None:
    """Parameter positions of a name or a tuple of names, else None."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    if not all(isinstance(n, ast.Name) and n.id in aliases for n in items):
        return None
    return tuple(aliases[n.id] for n in items)
