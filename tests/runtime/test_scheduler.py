import random
import threading
import time

import numpy as np
import pytest
import torch

from plang.ir.enums import ParamDirection as D
from plang.ir.enums import ScopeMode
from plang.runtime.pipes import library as pipes_library
from plang.runtime.profiling import Profiler
from plang.runtime.scheduler import GroupMember, Scheduler, TaskError


@pytest.fixture
def sched():
    s = Scheduler(workers=2, pipe_timeout=5.0)
    yield s
    s.close()


def scale_add(region, k, pause):
    def body(x):
        value = x.clone()
        time.sleep(pause)
        x.copy_(value * 2 + k)
    return body, (region,), (D.InOut,)


def copy(src, dst, pause):
    def body(a, b):
        value = a.clone()
        time.sleep(pause)
        b.copy_(value)
    return body, (src, dst), (D.In, D.Out)


def random_program(rng, x, y):
    """Random reads / writes over overlapping and disjoint ranges of two buffers."""
    ops = []
    for _ in range(30):
        a = rng.randrange(0, 12)
        n = rng.randrange(1, 5)
        pause = rng.choice([0, 0, 0.0005, 0.002])
        if rng.random() < 0.5:
            ops.append(scale_add(rng.choice([x, y])[a:a + n], rng.randrange(5), pause))
        else:
            b = rng.randrange(0, 12)
            src, dst = rng.sample([x, y], 2) if rng.random() < 0.7 else (x, x)
            ops.append(copy(src[a:a + n], dst[b:b + n], pause))
    return ops


@pytest.mark.parametrize("seed", range(12))
def test_randomized_raw_war_waw_matches_sequential(sched, seed):
    def build(rng):
        x, y = torch.arange(16, dtype=torch.float64), torch.arange(16, dtype=torch.float64) * -1
        return x, y, random_program(rng, x, y)

    x_ref, y_ref, ops = build(random.Random(seed))
    for body, args, _ in ops:
        body(*args)
    x, y, ops = build(random.Random(seed))
    for body, args, dirs in ops:
        sched.submit(body, args, dirs)
    sched.wait()
    assert torch.equal(x, x_ref) and torch.equal(y, y_ref)


def traced(sched):
    sched.profiler = Profiler()
    return sched.profiler


def held(gate):
    """A kernel that blocks until `gate` is set, so its task is unfinished while later
    tasks are submitted (finished tasks are never dependencies)."""
    return lambda *args: gate.wait(5)


def deps_by_task(profiler):
    return {s.task_id: set(s.deps) for s in profiler.slices}


def test_disjoint_regions_run_concurrently(sched):
    prof = traced(sched)
    x = torch.zeros(2, 8)
    t0 = sched.submit(lambda a: time.sleep(0.2), (x[0],), (D.Out,))
    t1 = sched.submit(lambda a: time.sleep(0.2), (x[1],), (D.Out,))
    t2 = sched.submit(lambda a: None, (x,), (D.In,))
    sched.wait()
    deps = deps_by_task(prof)
    assert deps[t1.id] == set() and deps[t2.id] == {t0.id, t1.id}
    a, b = sorted(prof.slices, key=lambda s: s.task_id)[:2]
    assert a.start_ns < b.end_ns and b.start_ns < a.end_ns


def test_manual_scope_uses_only_explicit_deps(sched):
    prof = traced(sched)
    x, order, gate = torch.zeros(4), [], threading.Event()
    with sched.scope(ScopeMode.MANUAL):
        first = sched.submit(lambda a: (gate.wait(5), order.append("first")), (x,), (D.Out,))
        second = sched.submit(lambda a: order.append("second"), (x,), (D.Out,), deps=[first, None])
        untracked = sched.submit(lambda a: None, (x,), (D.In,))
        with sched.scope(ScopeMode.AUTO):
            tracked = sched.submit(held(gate), (x,), (D.InOut,))
        with pytest.raises(RuntimeError, match="nested"):
            with sched.scope(ScopeMode.MANUAL):
                pass
    after = sched.submit(lambda a: None, (x,), (D.In,))
    gate.set()
    sched.wait()
    deps = deps_by_task(prof)
    assert order == ["first", "second"]
    assert deps[second.id] == {first.id} and deps[untracked.id] == set()
    assert deps[tracked.id] == set() and deps[after.id] == {tracked.id}


def test_explicit_deps_add_to_auto_deps(sched):
    prof = traced(sched)
    x, y, gate = torch.zeros(4), torch.zeros(4), threading.Event()
    a = sched.submit(held(gate), (x,), (D.Out,))
    b = sched.submit(held(gate), (y,), (D.Out,))
    c = sched.submit(lambda t: None, (x,), (D.In,), deps=[b])
    gate.set()
    sched.wait()
    assert deps_by_task(prof)[c.id] == {a.id, b.id}


def test_no_dep_argument_is_not_tracked(sched):
    prof = traced(sched)
    cache, out, gate = torch.zeros(8), torch.zeros(8), threading.Event()
    w0 = sched.submit(held(gate), (cache[0:4],), (D.Out,))
    w1 = sched.submit(lambda c, o: None, (cache, out), (D.NoDep, D.Out))
    r = sched.submit(lambda c: None, (cache,), (D.In,))
    gate.set()
    sched.wait()
    deps = deps_by_task(prof)
    assert deps[w1.id] == set() and deps[r.id] == {w0.id}


def test_spmd_fans_out_blocks(sched):
    out = torch.zeros(6, 4)
    seen = []

    def kernel(o, block_idx, block_num):
        seen.append((block_idx, block_num))
        time.sleep(0.001)
        o[block_idx] = block_idx + 1

    sched.submit(kernel, (out,), (D.Out,), blocks=6)
    total = torch.zeros(1)
    sched.submit(lambda o, t: t.copy_(o.sum().reshape(1)), (out, total), (D.In, D.Out))
    sched.wait()
    assert sorted(seen) == [(b, 6) for b in range(6)]
    assert total.item() == 4 * sum(range(1, 7))


def test_sync_start_blocks_run_together(sched):
    barrier = threading.Barrier(4, timeout=5)
    hits = []

    def kernel(block_idx, block_num):
        barrier.wait()  # would time out unless all 4 blocks run at once on 2 workers
        hits.append(block_idx)

    sched.submit(kernel, blocks=4, sync_start=True)
    sched.wait()
    assert sorted(hits) == [0, 1, 2, 3]


@pytest.mark.parametrize("gate, runs", [(0, False), (3, True)])
def test_predicate_skips_but_releases_dependents(sched, gate, runs):
    rc, out, ran = torch.zeros(1, dtype=torch.int32), torch.zeros(2), []
    gate_tid = sched.submit(lambda r: (time.sleep(0.02), r.fill_(gate)), (rc,), (D.Out,))
    sched.submit(lambda o: (ran.append("expert"), o.fill_(1)), (out,), (D.Out,), deps=[gate_tid],
                 predicate=lambda: int(rc[0]) > 0)
    sched.submit(lambda o: ran.append("after"), (out,), (D.In,))
    sched.wait()
    assert ran == (["expert", "after"] if runs else ["after"])
    assert out[0].item() == (1.0 if runs else 0.0)


def test_failure_names_task_and_kernel_and_stops_dependents(sched):
    x, ran = torch.zeros(4), []

    def broken_kernel(a):
        raise ValueError("bad tile")

    sched.submit(broken_kernel, (x,), (D.Out,))
    sched.submit(lambda a: ran.append("reader"), (x,), (D.In,))
    sched.submit(lambda: ran.append("independent"))
    with pytest.raises(TaskError, match=r"task \d+ \(broken_kernel\) failed: bad tile") as info:
        sched.wait()
    assert isinstance(info.value.__cause__, ValueError)
    assert ran == ["independent"]
    sched.submit(lambda a: ran.append("reused"), (x,), (D.In,))
    sched.wait()
    assert ran[-1] == "reused"


def test_failure_inside_spmd_block(sched):
    def kernel(block_idx, block_num):
        if block_idx == 2:
            raise RuntimeError("block exploded")

    sched.submit(kernel, blocks=4, name="grid")
    with pytest.raises(TaskError, match="grid.*block exploded"):
        sched.wait()


SLOTS = 2


def attention_group(q, k, v, out, steps):
    """AIC: S = q @ k_i (row halves to each AIV lane), then out += P @ v_i with P from the
    lanes; AIV lane: P = exp(S - 1). A flash-attention-shaped bidirectional loop."""
    rows, cols = q.shape[0], k.shape[2]
    half = rows // 2

    def aic(q, k, v, out, pipes, subblock_idx, block_idx, block_num):
        to_aiv = [pipes.get(2 * lane, half * cols * 4, SLOTS) for lane in range(2)]
        to_aic = [pipes.get(2 * lane + 1, half * cols * 4, SLOTS) for lane in range(2)]
        p_half = np.empty((half, cols), np.float32)
        for i in range(steps):
            s = q @ k[i]
            for lane in range(2):
                to_aiv[lane].push(np.ascontiguousarray(s[lane * half:(lane + 1) * half]))
            for lane in range(2):
                to_aic[lane].pop(p_half)
                out[lane * half:(lane + 1) * half] += p_half @ v[i]
                to_aic[lane].free()

    def aiv(q, k, v, out, pipes, subblock_idx, block_idx, block_num):
        lane = subblock_idx
        inbox = pipes.get(2 * lane, half * cols * 4, SLOTS)
        outbox = pipes.get(2 * lane + 1, half * cols * 4, SLOTS)
        s_half = np.empty((half, cols), np.float32)
        for _ in range(steps):
            inbox.pop(s_half)
            p = np.exp(s_half - 1.0).astype(np.float32)
            inbox.free()
            outbox.push(p)

    args = (q, k, v, out)
    return [GroupMember(aic, args), GroupMember(aiv, args, 0), GroupMember(aiv, args, 1)], args


def test_group_with_bidirectional_pipes_in_a_loop(sched):
    rng = np.random.default_rng(0)
    steps = 16
    q = rng.standard_normal((8, 4), dtype=np.float32)
    k = rng.standard_normal((steps, 4, 6), dtype=np.float32)
    v = rng.standard_normal((steps, 6, 5), dtype=np.float32)
    out = np.zeros((8, 5), np.float32)
    members, args = attention_group(q, k, v, out, steps)
    sched.submit_group(members, args, (D.In, D.In, D.In, D.InOut), blocks=2)
    sched.wait()
    expected = sum(np.exp(q @ k[i] - 1.0) @ v[i] for i in range(steps)) * 2  # two blocks accumulate
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_group_deadlock_times_out_with_a_named_error():
    sched = Scheduler(workers=1, pipe_timeout=0.3)

    def aic(pipes, subblock_idx, block_idx, block_num):
        pipes.get(1, 16).pop(np.empty(4, np.float32))  # waits for AIV, which also waits

    def aiv(pipes, subblock_idx, block_idx, block_num):
        pipes.get(0, 16).pop(np.empty(4, np.float32))

    try:
        sched.submit_group([GroupMember(aic), GroupMember(aiv, (), 0), GroupMember(aiv, (), 1)], name="stuck")
        with pytest.raises(TaskError, match=r"stuck.*pipe [01]: pop timed out"):
            sched.wait()
    finally:
        sched.close()


def test_group_member_failure_aborts_siblings(sched):
    def aic(pipes, subblock_idx, block_idx, block_num):
        raise ZeroDivisionError("cube fault")

    def aiv(pipes, subblock_idx, block_idx, block_num):
        pipes.get(0, 16).pop(np.empty(4, np.float32))  # woken by the abort, not the 5 s timeout

    sched.submit_group([GroupMember(aic), GroupMember(aiv, (), 0)])
    start = time.monotonic()
    with pytest.raises(TaskError, match="aic.*cube fault"):
        sched.wait()
    assert time.monotonic() - start < 4.0


def test_member_error_wins_over_the_misuse_it_provokes_in_a_native_style_sibling(sched):
    """A native kernel ignores return codes: after its pop is aborted it still frees. The
    Group's error must be the failing member's, not "free without a matching pop"."""
    lib = pipes_library()

    def aic(pipes, subblock_idx, block_idx, block_num):
        time.sleep(0.01)
        raise ValueError("cube fault")

    def aiv(pipes, subblock_idx, block_idx, block_num):
        pipe = pipes.get(subblock_idx, 16).handle
        out = np.empty(4, np.float32)
        lib.plang_pipe_pop(pipe, out.ctypes.data, 16)  # aborted: return code ignored
        lib.plang_pipe_free(pipe)

    for _ in range(20):
        sched.submit_group([GroupMember(aic), GroupMember(aiv, (), 0), GroupMember(aiv, (), 1)], name="g")
        with pytest.raises(TaskError, match="cube fault") as info:
            sched.wait()
        assert "without" not in str(info.value) and "free free" not in str(info.value)


def test_group_pipes_get_the_tasks_slot_count(sched):
    """AIC pushes four tiles before signalling AIV to start popping: only a ring of at least
    four slots lets it through (two slots time out)."""
    def aic(out, pipes, subblock_idx, block_idx, block_num):
        data = pipes.get(0, 16)
        for i in range(4):
            data.push(np.full(4, i, np.float32))
        pipes.get(2, 16).push(np.zeros(4, np.float32))  # go

    def aiv(out, pipes, subblock_idx, block_idx, block_num):
        go, data = pipes.get(2, 16), pipes.get(0, 16)
        tile = np.empty(4, np.float32)
        go.pop(tile)
        go.free()
        for i in range(4):
            data.pop(tile)
            out[i] = tile[0]
            data.free()

    out = np.zeros(4, np.float32)
    members = [GroupMember(aic, (out,)), GroupMember(aiv, (out,), 0)]
    sched.submit_group(members, (out,), (D.Out,), slots=4)
    sched.wait()
    np.testing.assert_array_equal(out, [0, 1, 2, 3])
    tight = Scheduler(workers=1, pipe_timeout=0.2)
    try:
        tight.submit_group(members, (out,), (D.Out,))  # default: 2 slots
        with pytest.raises(TaskError, match="timed out"):
            tight.wait()
    finally:
        tight.close()


@pytest.mark.parametrize("early", [False, True])
def test_early_resolve_consumers_go_ahead_of_queued_work(early):
    """Two cores: one blocks in `hold`, the other runs the flagged producer; when it
    finishes, its three consumers run before the independent tasks queued earlier."""
    sched = Scheduler(workers=2)
    started, release, started_hold, go = [], threading.Event(), threading.Event(), threading.Event()
    x = torch.zeros(8)

    def producer(x):
        go.wait(5)
        x.add_(1)

    def hold():
        started_hold.set()
        release.wait(5)

    def note(name):
        def body(*args):
            started.append(name)
        body.__name__ = name
        return body

    try:
        sched.submit(producer, (x,), (D.InOut,), allow_early_resolve=early)
        sched.submit(hold)
        for i in range(3):
            sched.submit(note(f"independent{i}"))
        for i in range(3):
            sched.submit(note(f"consumer{i}"), (x[i:i + 1],), (D.In,))
        assert started_hold.wait(5)
        go.set()
        deadline = time.monotonic() + 5
        while len(started) < 6 and time.monotonic() < deadline:
            time.sleep(0.001)
        release.set()
        sched.wait()
    finally:
        sched.close()
    consumers_first = started.index("consumer2") < started.index("independent0")
    assert consumers_first == early, started


@pytest.mark.parametrize("manual", [True, False])
def test_host_reads_and_writes_wait_for_untracked_tasks(sched, manual):
    """A task in a manual scope (or with a NoDep argument) is not in the OverlapMap, yet an
    orchestration-time read waits for it to write and a write waits for it to read."""
    for _ in range(5):
        x, y = torch.zeros(4), torch.zeros(4)

        def slow_fill(t):
            time.sleep(0.02)
            t.fill_(7)

        def slow_copy(src, dst):
            time.sleep(0.02)
            dst.copy_(src)

        with sched.scope(ScopeMode.MANUAL if manual else ScopeMode.AUTO):
            sched.submit(slow_fill, (x,), (D.Out if manual else D.NoDep,))
        sched.wait_for(x[1:2])
        assert x[1] == 7
        with sched.scope(ScopeMode.MANUAL if manual else ScopeMode.AUTO):
            sched.submit(slow_copy, (x, y), (D.In if manual else D.NoDep, D.Out))
        sched.wait_for(x[2:3], write=True)
        x[2] = -1  # the copy already read x
        sched.wait()
        assert y.tolist() == [7, 7, 7, 7]


def test_a_finished_run_holds_no_tensor_alive(sched):
    """After `wait()` the memory history is dropped: a user tensor the tasks wrote is freed
    when the user drops it (it used to stay alive until the next run, so every call of an
    operator faulted in a fresh output)."""
    import gc
    import weakref

    out = torch.zeros(64)
    src = torch.ones(64)
    body, args, dirs = copy(src, out, 0.0)
    sched.submit(body, args, dirs)
    sched.wait()
    assert torch.equal(out, src)
    gone = weakref.ref(out)
    del out, args
    gc.collect()
    assert gone() is None


def test_dependencies_still_order_tasks_after_a_wait(sched):
    """Work submitted after a wait still follows what it reads (the history restarts)."""
    x, y = torch.zeros(16), torch.zeros(16)
    sched.submit(*scale_add(x, 1.0, 0.0))
    sched.wait()
    sched.submit(*scale_add(x, 1.0, 0.02))
    sched.submit(*copy(x, y, 0.0))
    sched.wait()
    assert torch.equal(y, torch.full((16,), 3.0))
