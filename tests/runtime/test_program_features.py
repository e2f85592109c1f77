"""Language features that reach the runtime, end to end through `@pl.jit`: pipe slot
counts, pl.graph record / replay, TaskId arrays, host-side tensor reads / writes, dumps."""

import torch

import plang as pl


@pl.jit
def matmul_relu_4_slots(a: pl.Tensor, b: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP,
               optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]):
        at = pl.slice(a, [32, 32], [0, 0])
        bt = pl.slice(b, [32, 32], [0, 0])
        c = pl.relu(pl.matmul(at, bt, out_dtype=pl.FP32))
        o = pl.assemble(o, c, [0, 0])
    return o


def test_cross_core_slot_reaches_the_groups_pipes():
    a, b = torch.randn(32, 32).to(torch.bfloat16), torch.randn(32, 32).to(torch.bfloat16)
    o = torch.zeros(32, 32)
    compiled = matmul_relu_4_slots.compile(a, b, o)
    assert "slots=4)" in compiled.source
    matmul_relu_4_slots(a, b, o)
    torch.testing.assert_close(o, torch.relu(a.float() @ b.float()), rtol=1e-2, atol=1e-2)
