"""`python programs.py N` (self-launches N ranks, or joins `mpiexec -n N`): the rank runtime's
ops (rank_ops.py), then `@pl.jit.host` programs using every `pld` op in a per-rank program
and at host level, each result against torch; exits non-zero on a mismatch."""

from __future__ import annotations

import sys

import torch
from rank_ops import check_runtime

import plang as pl
import plang.distributed as pld
from plang.distributed.launch import ensure_ranks
from plang.ir.distributed_compiled_program import DistributedConfig
from plang.runtime import RunConfig

N = int(sys.argv[1])
R, C = 4, 256  # 4 KiB per transfer
T = pl.Tensor[[R, C], pl.FP32]
W = pld.DistributedTensor[[R, C], pl.FP32]


@pl.jit
def p2p_rank(x: T, y_put: pl.Out[T],
               y_store: pl.Out[T], y_get: pl.Out[T],
               y_load: pl.Out[pl.Tensor[[2, 64], pl.FP32]], y_acc: pl.Out[T],
               src: W, put_dst: W,
               store_dst: W, get_dst: W,
               acc: W, sig: pld.DistributedTensor[[2, 1], pl.INT32],
               bsig: pld.DistributedTensor[[N, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(src)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    nxt = (me + 1) % n
    prv = (me + n - 1) % n
    t = pl.load(x, [0, 0], [R, C])
    src = pl.store(t, [0, 0], src)
    # put, then an AtomicAdd signal: the waiter reads the data only after it landed
    pld.tensor.put(put_dst, peer=nxt, src=src)
    pld.system.notify(sig, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y_put = pl.store(pl.load(put_dst, [0, 0], [R, C]), [0, 0], y_put)
    # remote_store into the previous rank, then a Set signal / Eq wait
    pld.tile.remote_store(t, store_dst, peer=prv, offsets=[0, 0])
    pld.system.notify(sig, peer=prv, offsets=[1, 0], value=5, op=pld.NotifyOp.Set)
    pld.system.wait(sig, offsets=[1, 0], expected=5, cmp=pld.WaitCmp.Eq)
    y_store = pl.store(pl.load(store_dst, [0, 0], [R, C]), [0, 0], y_store)
    # atomic remote adds from every rank into rank 0, ordered by the barrier
    pld.tile.remote_store(t, acc, peer=0, offsets=[0, 0], atomic=pld.AtomicType.Add)
    bsig = pld.tensor.barrier(bsig)
    y_acc = pl.store(pl.load(acc, [0, 0], [R, C]), [0, 0], y_acc)
    # pulls: get the next rank's src, remote_load a region of it
    pld.tensor.get(get_dst, peer=nxt, src=src)
    y_get = pl.store(pl.load(get_dst, [0, 0], [R, C]), [0, 0], y_get)
    part = pld.tile.remote_load(src, peer=nxt, offsets=[1, 64], shape=[2, 64])
    y_load = pl.store(part, [0, 0], y_load)
    return y_put


@pl.jit.host
def p2p(x: pl.Tensor[[N, R, C], pl.FP32], y_put: pl.Out[pl.Tensor[[N, R, C], pl.FP32]],
        y_store: pl.Out[pl.Tensor[[N, R, C], pl.FP32]], y_get: pl.Out[pl.Tensor[[N, R, C], pl.FP32]],
        y_load: pl.Out[pl.Tensor[[N, 2, 64], pl.FP32]], y_acc: pl.Out[pl.Tensor[[N, R, C], pl.FP32]]):
    src_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    put_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    store_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    get_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    acc_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    bsig_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        src = pld.window(src_buf, [R, C], dtype=pl.FP32)
        put_dst = pld.window(put_buf, [R, C], dtype=pl.FP32)
        store_dst = pld.window(store_buf, [R, C], dtype=pl.FP32)
        get_dst = pld.window(get_buf, [R, C], dtype=pl.FP32)
        acc = pld.window(acc_buf, [R, C], dtype=pl.FP32)
        sig = pld.window(sig_buf, [2, 1], dtype=pl.INT32)
        bsig = pld.window(bsig_buf, [N, 1], dtype=pl.INT32)
        p2p_rank(x[r], y_put[r], y_store[r], y_get[r], y_load[r], y_acc[r], src, put_dst, store_dst, get_dst,
                 acc, sig, bsig, device=r)


@pl.jit
def coll_rank(x: pl.Tensor[[N, C], pl.FP32], y_ar: pl.Out[pl.Tensor[[1, C], pl.FP32]],
                y_ag: pl.Out[pl.Tensor[[N, C], pl.FP32]], y_rs: pl.Out[pl.Tensor[[1, C], pl.FP32]],
                y_bc: pl.Out[pl.Tensor[[1, C], pl.FP32]], y_a2a: pl.Out[pl.Tensor[[N, C], pl.FP32]],
                ar: pld.DistributedTensor[[1, C], pl.FP32], row: pld.DistributedTensor[[1, C], pl.FP32],
                ag: pld.DistributedTensor[[N, C], pl.FP32], full: pld.DistributedTensor[[N, C], pl.FP32],
                a2a: pld.DistributedTensor[[N, C], pl.FP32], sig: pld.DistributedTensor[[N, 1], pl.INT32]):
    me = pld.rank(pld.get_comm_ctx(ar))
    t = pl.load(x, [0, 0], [1, C])
    ar = pl.store(t, [0, 0], ar)
    ar = pld.tensor.allreduce(ar, sig, op=pld.ReduceOp.Max)
    y_ar = pl.store(pl.load(ar, [0, 0], [1, C]), [0, 0], y_ar)
    row = pl.store(t, [0, 0], row)
    ag = pld.tensor.allgather(row, ag, sig)
    y_ag = pl.store(pl.load(ag, [0, 0], [N, C]), [0, 0], y_ag)
    rows = pl.load(x, [0, 0], [N, C])
    full = pl.store(rows, [0, 0], full)
    a2a = pld.tensor.all_to_all(full, a2a, sig)
    y_a2a = pl.store(pl.load(a2a, [0, 0], [N, C]), [0, 0], y_a2a)
    full = pld.tensor.reduce_scatter(full, sig, op=pld.ReduceOp.Sum)
    y_rs = pl.store(pl.load(full, [me, 0], [1, C]), [0, 0], y_rs)
    row = pl.store(pl.load(x, [1, 0], [1, C]), [0, 0], row)  # x[r][1 % N]
    row = pld.tensor.broadcast(row, sig, root=N - 1)
    y_bc = pl.store(pl.load(row, [0, 0], [1, C]), [0, 0], y_bc)
    return y_ar


@pl.jit.host
def collectives(x: pl.Tensor[[N, N, C], pl.FP32], y_ar: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]],
                y_ag: pl.Out[pl.Tensor[[N, N, C], pl.FP32]], y_rs: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]],
                y_bc: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]], y_a2a: pl.Out[pl.Tensor[[N, N, C], pl.FP32]]):
    ar_buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    row_buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    ag_buf = pld.alloc_window_buffer([N, C], dtype=pl.FP32)
    full_buf = pld.alloc_window_buffer([N, C], dtype=pl.FP32)
    a2a_buf = pld.alloc_window_buffer([N, C], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        ar = pld.window(ar_buf, [1, C], dtype=pl.FP32)
        row = pld.window(row_buf, [1, C], dtype=pl.FP32)
        ag = pld.window(ag_buf, [N, C], dtype=pl.FP32)
        full = pld.window(full_buf, [N, C], dtype=pl.FP32)
        a2a = pld.window(a2a_buf, [N, C], dtype=pl.FP32)
        sig = pld.window(sig_buf, [N, 1], dtype=pl.INT32)
        coll_rank(x[r], y_ar[r], y_ag[r], y_rs[r], y_bc[r], y_a2a[r], ar, row, ag, full, a2a, sig, device=r)


@pl.jit.incore
def stage_kernel(x: pl.Tensor[[1, C], pl.FP32], data: pld.DistributedTensor[[1, C], pl.FP32]):
    data = pl.store(pl.load(x, [0, 0], [1, C]), [0, 0], data)
    return data


@pl.jit
def stage(x: pl.Tensor[[1, C], pl.FP32], data: pld.DistributedTensor[[1, C], pl.FP32]):
    return stage_kernel(x, data)


@pl.jit.incore
def scale_kernel(data: pld.DistributedTensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
                 rank: pl.Scalar[pl.INT32]):
    t = pl.load(data, [0, 0], [1, C])
    y = pl.store(pl.add(t, pl.cast(rank, target_type=pl.FP32)), [0, 0], y)
    return y


@pl.jit
def scale(data: pld.DistributedTensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
          rank: pl.Scalar[pl.INT32]):
    return scale_kernel(data, y, rank)


@pl.jit.host
def host_allreduce(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
    """Chip kernels without pld ops (native) around a host-level allreduce."""
    buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    data = pld.window(buf, [1, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        stage(x[r], data, device=r)
    data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
    for r in pl.range(pld.world_size()):
        scale(data, y[r], r, device=r)


def check(name: str, got: torch.Tensor, want: torch.Tensor) -> None:
    if not torch.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise AssertionError(f"{name}: max diff {(got - want).abs().max().item()}")


def main() -> None:
    check_runtime(ensure_ranks(N, timeout=20.0))
    config = RunConfig(distributed_config=DistributedConfig(device_ids=list(range(N))))
    nxt = [(r + 1) % N for r in range(N)]
    prv = [(r - 1) % N for r in range(N)]

    x = torch.randn(N, R, C)
    outs = [torch.zeros(N, R, C), torch.zeros(N, R, C), torch.zeros(N, R, C), torch.zeros(N, 2, 64),
            torch.zeros(N, R, C)]
    p2p.compile(x, *outs, config=config)(x, *outs)
    y_put, y_store, y_get, y_load, y_acc = outs
    check("put + notify/wait", y_put, x[prv])
    check("remote_store + Set/Eq", y_store, x[nxt])
    check("get", y_get, x[nxt])
    check("remote_load", y_load, x[nxt][:, 1:3, 64:128])
    check("atomic remote_store", y_acc[0], x.sum(0))

    x = torch.randn(N, N, C)
    outs = [torch.zeros(N, 1, C), torch.zeros(N, N, C), torch.zeros(N, 1, C), torch.zeros(N, 1, C),
            torch.zeros(N, N, C)]
    collectives(x, *outs, config=config)
    y_ar, y_ag, y_rs, y_bc, y_a2a = outs
    check("allreduce Max", y_ar, x[:, 0:1].max(0).values.expand(N, 1, C))
    check("allgather", y_ag, x[:, 0].expand(N, N, C))
    check("reduce_scatter", y_rs, x.sum(0).unsqueeze(1))
    check("broadcast", y_bc, x[N - 1, 1:2].expand(N, 1, C))
    check("all_to_all", y_a2a, x.transpose(0, 1))

    x, y = torch.randn(N, 1, C), torch.zeros(N, 1, C)
    host_allreduce(x, y, config=config)
    check("host allreduce", y, x.sum(0) + torch.arange(N, dtype=torch.float32).view(N, 1, 1))
    print(f"rank programs ok on {N} ranks", file=sys.stderr)


if __name__ == "__main__":
    main()
