"""Language features that reach the runtime, end to end through `@pl.jit`: pipe slot
counts, pl.graph record / replay, TaskId arrays, host-side tensor reads / writes, dumps."""

import torch

import plang as pl
from plang.runtime import ChipWorker, RunConfig


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


N = 16


@pl.jit.incore
def add_one(x: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.load(x, [0, 0], [N, N])
    out = pl.store(pl.add(t, 1.0), [0, 0], out)
    return out


@pl.jit
def task_id_array_chain(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """x + 3 through three tasks chained by TaskIds kept in an array; then the host doubles
    element [0, 0] into [0, 1]."""
    with pl.manual_scope():
        tids = pl.array.create(2, pl.TASK_ID)
        a = pl.create_tensor([N, N], dtype=pl.FP32)
        a, t0 = pl.submit(add_one, x, a, allow_early_resolve=True)
        tids[0] = t0
        b = pl.create_tensor([N, N], dtype=pl.FP32)
        b, t1 = pl.submit(add_one, a, b, deps=[tids[0]], dumps=[a])
        tids[1] = t1
        out, t2 = pl.submit(add_one, b, out, deps=[tids[1]])
    v = pl.tensor.read(out, [0, 0])
    out = pl.tensor.write(out, [0, 1], v * 2.0)
    return out


def expected_chain(x):
    want = x + 3
    want[0, 1] = 2 * want[0, 0]
    return want


def test_task_id_array_deps_and_host_read_write():
    source = task_id_array_chain.compile(torch.zeros(N, N), torch.zeros(N, N)).source
    assert "(None,) * 2" in source and "_array_set(" in source and "allow_early_resolve=True" in source
    for _ in range(10):
        x, out = torch.randn(N, N), torch.zeros(N, N)
        task_id_array_chain(x, out)
        torch.testing.assert_close(out, expected_chain(x))


def test_dumps_write_the_marked_tensors_after_their_task(tmp_path):
    x = torch.randn(N, N)
    with ChipWorker(RunConfig(enable_dump_args=1, dump_dir=str(tmp_path))) as worker:
        task_id_array_chain(x, torch.zeros(N, N))
        (marked,) = worker.last_dumps  # only `a`, marked on the second launch
        assert "add_one" in marked and marked.endswith("_arg0.pt")
        torch.testing.assert_close(torch.load(marked), x + 1)
    with ChipWorker(RunConfig(enable_dump_args=2, dump_dir=str(tmp_path))) as worker:
        out = torch.zeros(N, N)
        task_id_array_chain(x, out)
        dumped = [torch.load(p) for p in worker.last_dumps]
    assert len(dumped) == 6  # every tensor argument of the three launches
    for value, want in zip(dumped, [x, x + 1, x + 1, x + 2, x + 2, x + 3]):
        torch.testing.assert_close(value, want)


@pl.jit
def layered(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = x + 1, then four identical layers of two launches through a region-created
    tensor `h`: out = (out + 1) + 1."""
    out = add_one(x, out)
    for i in pl.range(4):
        with pl.graph("layer"):
            h = pl.create_tensor([N, N], dtype=pl.FP32)
            h = add_one(out, h)
            out = add_one(h, out)
    return out


def test_graph_records_once_and_replays_with_new_tensors():
    compiled = layered.compile(torch.zeros(N, N), torch.zeros(N, N))
    assert "with rt.graph('layer'):" in compiled.source
    with ChipWorker(RunConfig(workers=2)) as worker:
        handle = worker.register(compiled)
        lookups = []
        overlap = worker.scheduler._overlap
        real_access = overlap.access

        def counting_access(*args):
            lookups.append(args[0])
            real_access(*args)

        overlap.access = counting_access
        counts = []
        for call in range(6):
            x, out = torch.randn(N, N), torch.zeros(N, N)
            before = len(lookups)
            handle(x, out)
            counts.append(len(lookups) - before)
            torch.testing.assert_close(out, x + 9)
        recording = handle.graphs["layer"]
    # the first call records layer 0 and replays layers 1-3; later calls replay all four:
    # each replay skips the two lookups of `h` (written by one launch, read by the next)
    assert recording.replays == 3 + 5 * 4
    assert recording.skipped_lookups == 2 * recording.replays
    assert counts[0] - counts[1] == 2 and len(set(counts[1:])) == 1
    assert [len(r.preds) for r in recording.launches] == [0, 1]  # h: write, then read after it
