"""Torch reference emitters for the rank-level `pld` ops.

A rank's kernel calls `rt.pld_rank()`, the rank runtime the distributed executor bound for
this process (`torch_ref_lib.bind_pld`), so one-sided transfers, signals and collectives run
on the real engine while the rest of the kernel is torch. The host-level ops (window
allocation and views) belong to a HOST function: a `@pl.jit.host` orchestrator runs them as
Python; in an L3 `@pl.program`'s HOST function they are `HOST_TABLE`'s calls of the rank
runtime, and its calls of chip entries and SubWorkers go through `rt.dispatch`, which the
distributed executor binds to run each on the rank its `device=` names.
"""

from __future__ import annotations

from typing import Callable

from ..errors import UnsupportedConstructError

HOST_ONLY = ("pld.tensor.alloc_window_buffer", "pld.tensor.window")


_bound: list = []
_dispatcher: list = []


def bind_pld(rank_ops, dispatcher: Callable | None = None) -> None:
    """Make `rank_ops` (or None) what `rt.pld_rank()` returns in this process, and
    `dispatcher(fn, name, device, args)` what runs a HOST function's calls (`rt.dispatch`)."""
    _bound[:] = [] if rank_ops is None else [rank_ops]
    _dispatcher[:] = [] if dispatcher is None else [dispatcher]


def dispatch(fn: Callable, name: str, device, args: tuple):
    """A HOST function's call of function `name` (generated as `fn`) on `device`: the bound
    executor's to route; without one every device is this process."""
    return _dispatcher[0](fn, name, device, args) if _dispatcher else fn(*args)


def pld_rank():
    """The bound rank runtime; outside a distributed run, an error saying how to get one."""
    if not _bound:
        raise UnsupportedConstructError(
            "this kernel communicates between ranks (pld ops): run it from a @pl.jit.host orchestrator "
            "with RunConfig(distributed_config=DistributedConfig(...)) so each rank has the runtime")
    return _bound[0]


def _args(*names: str, enums: tuple[str, ...] = ()) -> Callable:
    """An emitter calling the rank runtime's method of the op's last name segment with the
    named arguments (enum attributes as their int values)."""

    def emit(a) -> str:
        parts = [f"{int(a.raw(n))}" if n in enums else "None" if a.raw(n) is None else a[n] for n in names]
        method = a.call.op.name.rsplit(".", 1)[1]
        return f"rt.pld_rank().{method}({', '.join(parts)})"

    return emit


def _host_only(a) -> str:
    raise UnsupportedConstructError(
        f"{a.call.op.spelling} belongs to the host orchestrator (@pl.jit.host), which the distributed "
        "executor runs on every rank; a chip kernel cannot call it", a.call.span)


HOST_TABLE = {
    "pld.tensor.alloc_window_buffer": lambda a: f"rt.pld_rank().alloc({a['size']}, {a.raw('name')!r})",
    "pld.tensor.window": lambda a: (f"rt.pld_rank().window({a['buf']}, {a['shape']}, "
                                    f"rt.DataType.from_name({a.raw('dtype').name!r}))"),
}


def register(table: dict) -> None:
    region = ("dst_offsets", "src_offsets", "shape")
    table["pld.system.world_size"] = lambda a: "rt.pld_rank().nranks"
    table["pld.system.get_comm_ctx"] = _args("dist_tensor")
    table["pld.system.rank"] = lambda a: f"{a['ctx']}.rank"
    table["pld.system.nranks"] = lambda a: f"{a['ctx']}.nranks"
    table["pld.system.notify"] = _args("target", "peer", "offsets", "value", "op", enums=("op",))
    table["pld.system.wait"] = table["pld.system.defer_wait"] = _args(
        "signal", "offsets", "expected", "cmp", enums=("cmp",))
    table["pld.tensor.put"] = table["pld.tile.put"] = _args(
        "dst", "peer", "src", *region, "atomic", enums=("atomic",))
    table["pld.tensor.get"] = table["pld.tile.get"] = _args("dst", "peer", "src", *region)
    table["pld.tile.remote_load"] = _args("target", "peer", "offsets", "shape", "valid_shape")
    table["pld.tile.remote_store"] = _args("src_tile", "target", "peer", "offsets", "atomic",
                                           enums=("atomic",))
    table["pld.tensor.remote_store"] = _args("src", "target", "peer", "offsets", "atomic", enums=("atomic",))
    table["pld.tensor.allreduce"] = _args("target", "op", enums=("op",))
    table["pld.tensor.reduce_scatter"] = _args("target", "op", enums=("op",))
    table["pld.tensor.broadcast"] = lambda a: f"rt.pld_rank().broadcast({a['target']}, {int(a.raw('root'))})"
    table["pld.tensor.allgather"] = table["pld.tensor.all_to_all"] = _args("input", "target")
    table["pld.tensor.all_to_all_v"] = _args("input", "target", "send_counts", "recv_counts")
    table["pld.tensor.barrier"] = _args("signal")
    for name in HOST_ONLY:
        table[name] = _host_only
