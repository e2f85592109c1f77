"""`check_runtime(comm)`, on every rank: each rank-runtime op against torch (programs.py
calls it before the `@pl.jit.host` programs); prints `rank r ok` on stderr."""

from __future__ import annotations

import sys

import numpy as np
import torch

from plang.distributed.runtime import RankComm, WaitTimeout
from plang.ir.enums import AtomicType, NotifyOp, ReduceOp, WaitCmp

ROWS, COLS = 4, 1024  # 16 KiB per rank: data large enough that a racing signal would show


def data(r: int, shape=(ROWS, COLS)) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(1000 + r))


def check(name: str, got, want) -> None:
    got = torch.as_tensor(np.asarray(got))
    if not torch.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise AssertionError(f"{name}: max diff {(got - want).abs().max().item()}")


def check_runtime(c: RankComm) -> None:
    r, n = c.rank, c.nranks
    nxt, prv = (r + 1) % n, (r - 1) % n
    x = [data(i) for i in range(n)]

    # put + AtomicAdd notify / Ge wait: the wait returns only after the data landed
    dst = c.alloc_window(n * ROWS * COLS * 4, "dst").tensor([n * ROWS, COLS], np.float32)
    sig = c.alloc_window(n * 4, "sig").tensor([n, 1], np.int32)
    c.put(dst, nxt, x[r].numpy(), offsets=[r * ROWS, 0])
    c.notify(sig, nxt, [r, 0], 1, NotifyOp.AtomicAdd)
    assert c.wait(sig, [prv, 0], 1, WaitCmp.Ge) == 1
    check("put", dst.local[prv * ROWS:(prv + 1) * ROWS], x[prv])

    # get / remote_load of a sub-region of the peer's window
    src = c.alloc_window(ROWS * COLS * 4, "src").tensor([ROWS, COLS], np.float32)
    src.local[:] = x[r].numpy()
    c.barrier()
    check("get", c.get(src, nxt), x[nxt])
    check("remote_load region", c.get(src, nxt, offsets=[1, 16], shape=[2, 32]), x[nxt][1:3, 16:48])

    # atomic put (AtomicType.Add) from every rank into rank 0
    acc = c.alloc_window(ROWS * COLS * 4, "acc").tensor([ROWS, COLS], np.float32)
    c.put(acc, 0, x[r].numpy(), atomic=AtomicType.Add)
    c.barrier()
    if r == 0:
        check("atomic put", acc.local, sum(x))

    # Set notify / Eq wait, twice on one cell
    flag = c.alloc_window(4, "flag").tensor([1], np.int32)
    for value in (7, 3):
        c.notify(flag, nxt, [0], value, NotifyOp.Set)
        c.wait(flag, [0], value, WaitCmp.Eq)
        c.barrier()

    # collectives on window tensors and plain arrays
    buf = c.alloc_window(ROWS * COLS * 4, "ar").tensor([ROWS, COLS], np.float32)
    for op, ref in ((ReduceOp.Sum, lambda t: t.sum(0)), (ReduceOp.Max, lambda t: t.max(0).values),
                    (ReduceOp.Min, lambda t: t.min(0).values), (ReduceOp.Prod, lambda t: t.prod(0))):
        buf.local[:] = x[r].numpy()
        c.allreduce(buf, op)
        check(f"allreduce {op.name}", buf.local, ref(torch.stack(x)))
    gathered = np.zeros((n, ROWS, COLS), np.float32)
    check("allgather", c.allgather(x[r].numpy(), gathered), torch.stack(x))
    chunks = [data(i, (n, 8)) for i in range(n)]
    rs = chunks[r].numpy().copy()
    check("reduce_scatter", c.reduce_scatter(rs, ReduceOp.Sum)[r], sum(chunks)[r])
    b = x[r].clone()
    check("broadcast", c.broadcast(b, root=n - 1), x[n - 1])
    a2a = np.zeros((n, 8), np.float32)
    check("all_to_all", c.all_to_all(chunks[r].numpy(), a2a), torch.stack([ch[r] for ch in chunks]))

    # a wait nobody satisfies times out, naming the rank and the signal
    try:
        c.wait(flag, [0], 99, WaitCmp.Eq, timeout=0.2)
        raise AssertionError("wait did not time out")
    except WaitTimeout as e:
        assert f"rank {r}" in str(e) and "'flag'" in str(e), str(e)
    c.free_windows()
    print(f"rank {r} ok", file=sys.stderr)
