"""`pl.system.*`: pipe flags, barriers, fences and cache maintenance (no effect on the CPU,
where a core runs its ops in program order over coherent memory) and the TaskId sentinels
`task_invalid` / `task_dummy` of manual dependencies."""

from __future__ import annotations

import torch

import plang as pl
from plang.ir import assert_structural_equal


@pl.program
class Ordered:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], ws: pl.Tensor[[256], pl.INT64],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        pl.system.set_ffts(ws)
        t = pl.load(x, [0, 0], [16, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.bar_v()
        pl.system.bar_m()
        pl.system.bar_all()
        pl.system.sync_set(3, pipe=pl.PipeType.MTE3, ffts_mode=1)
        pl.system.sync_wait(3, pipe=pl.PipeType.MTE2, core_type="aiv")
        pl.system.cacheinvalid()
        pl.system.cacheinvalid(x, [16, 64], [0, 0])
        pl.system.fence()
        out = pl.store(pl.add(t, 1.0), [0, 0], out)
        return out


def test_ordering_ops_round_trip():
    text = Ordered.as_python()
    again = pl.parse(text)
    assert_structural_equal(Ordered, again)
    assert "pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)" in text
    assert "pl.system.cacheinvalid(tensor=x, shapes=[16, 64], offsets=[0, 0])" in text


@pl.jit
def fenced_add(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.bar_all()
        pl.system.cacheinvalid(x, [16, 64], [0, 0])
        u = pl.add(t, 1.0)
        pl.system.fence()
        pl.store(u, [0, 0], out)
    return out


def test_ordering_ops_compile_to_nothing_and_the_kernel_computes():
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    fenced_add(x, out)
    torch.testing.assert_close(out, x + 1)


N = 16


@pl.jit.incore
def add_one(x: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    out = pl.store(pl.add(pl.load(x, [0, 0], [N, N]), 1.0), [0, 0], out)
    return out


@pl.jit
def fan_in(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = (x + 1) + 1 after a dummy task waiting for both producers (an array of TaskIds
    and the invalid TaskId among its deps)."""
    with pl.manual_scope():
        tids = pl.array.create(2, pl.TASK_ID)
        a = pl.create_tensor([N, N], dtype=pl.FP32)
        b = pl.create_tensor([N, N], dtype=pl.FP32)
        a, t0 = pl.submit(add_one, x, a)
        tids[0] = t0
        b, t1 = pl.submit(add_one, y, b)
        tids[1] = t1
        gate = pl.system.task_dummy(deps=[tids, pl.system.task_invalid()])
        out, t2 = pl.submit(add_one, a, out, deps=[gate, None])
    return out


def test_task_dummy_waits_for_its_deps():
    x, y = torch.randn(N, N), torch.randn(N, N)
    source = fan_in.compile(x, y, torch.zeros(N, N)).source
    assert "rt.task_dummy((*tids" in source
    for _ in range(5):
        out = torch.zeros(N, N)
        fan_in(x, y, out)
        torch.testing.assert_close(out, x + 2)
