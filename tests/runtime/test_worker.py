import json
import time

import pytest
import torch

from plang.dtypes import FP32, INT32
from plang.ir.enums import ParamDirection as D
from plang.runtime import ChipWorker, CompiledProgram, ParamSpec, RunConfig, TaskError


class CountingKernel:
    """A kernel object with a load() hook, like codegen's."""

    def __init__(self, name, body):
        self.kernel_name, self.body, self.loads = name, body, 0

    def load(self):
        self.loads += 1

    def __call__(self, *args, **launch):
        return self.body(*args, **launch)


def add_program():
    def add(a, b, out):
        torch.add(a, b, out=out)

    def scale(x, out, block_idx, block_num):
        rows = x.shape[0] // block_num
        out[block_idx * rows:(block_idx + 1) * rows] = x[block_idx * rows:(block_idx + 1) * rows] * 2

    def orchestration(rt, a, b, out):
        tmp = rt.create_tensor(a.shape, FP32)
        rt.submit("add", (a, b, tmp), (D.In, D.In, D.Out))
        rt.submit("scale", (tmp, out), (D.In, D.Out), core_num=4)
        return out

    kernels = {"add": CountingKernel("add", add), "scale": CountingKernel("scale", scale)}
    signature = [ParamSpec("a", FP32, ("M", 4)), ParamSpec("b", FP32, ("M", 4)),
                 ParamSpec("out", FP32, ("M", 4), D.Out)]
    return CompiledProgram("add_scale", signature, orchestration, kernels)


def test_register_once_and_reuse_handle():
    prog = add_program()
    with ChipWorker(RunConfig(clusters=2)) as worker:
        h1, h2 = worker.register(prog), worker.register(prog)
        assert h1 is h2 and worker.load_count == 1
        assert all(k.loads == 1 for k in prog.kernels.values())
        a = worker.alloc_tensor([8, 4], FP32, init=torch.arange(32.0).reshape(8, 4))
        b = torch.ones(8, 4)
        out = worker.alloc_tensor([8, 4], torch.float32)
        for _ in range(3):
            h1(a, b, out)
        assert torch.equal(out.torch(), (a.torch() + 1) * 2)
        worker.run(prog, a, b, out)
        assert worker.load_count == 1


def test_compiled_call_runs_on_current_worker():
    prog = add_program()
    a, b, out = torch.ones(4, 4), torch.ones(4, 4), torch.zeros(4, 4)
    with ChipWorker(RunConfig(workers=2)) as worker:
        assert ChipWorker.current() is worker
        prog(a, b, out)
        assert worker.load_count == 1
    assert ChipWorker.current() is None and worker.closed
    assert torch.equal(out, torch.full((4, 4), 4.0))


def test_signature_mismatches_raise_before_running():
    prog = add_program()
    ran = []
    prog.kernels["add"].body = lambda *a: ran.append(1)
    with ChipWorker() as worker:
        with pytest.raises(TypeError, match="'b' expects dtype pl.FP32, got pl.INT32"):
            worker.run(prog, torch.ones(4, 4), torch.ones(4, 4, dtype=torch.int32), torch.ones(4, 4))
        with pytest.raises(ValueError, match=r"'b' expects shape \[4, 4\], got \[4, 5\]"):
            worker.run(prog, torch.ones(4, 4), torch.ones(4, 5), torch.ones(4, 4))
        with pytest.raises(TypeError, match="takes 3 arguments"):
            worker.run(prog, torch.ones(4, 4))
    assert ran == []


def test_close_frees_everything_and_use_after_close_raises():
    prog = add_program()
    worker = ChipWorker()
    handle = worker.register(prog)
    t = worker.alloc_tensor([2, 2], INT32, init=7)
    assert torch.equal(t.torch(), torch.full((2, 2), 7, dtype=torch.int32))
    worker.free_tensor(t)
    assert t.freed
    kept = worker.alloc_tensor([2], FP32)
    assert worker.tensor_count == 1 and worker.program_count == 1
    worker.close()
    assert kept.freed and worker.tensor_count == 0 and worker.program_count == 0
    for use in (lambda: worker.alloc_tensor([1], FP32), lambda: worker.register(prog),
                lambda: handle(torch.ones(1, 4), torch.ones(1, 4), torch.ones(1, 4))):
        with pytest.raises(RuntimeError, match="closed"):
            use()
    with pytest.raises(RuntimeError, match="freed"):
        kept.torch()


def test_kernel_error_surfaces_from_run():
    prog = add_program()
    prog.kernels["add"].body = lambda *a: 1 / 0
    with ChipWorker() as worker:
        with pytest.raises(TaskError, match=r"\(add\) failed"):
            worker.run(prog, torch.ones(4, 4), torch.ones(4, 4), torch.zeros(4, 4))


def test_profile_trace_has_lanes_slices_and_overlap(tmp_path, capsys):
    def orchestration(rt, x, y):
        rt.submit("long_a", (x,), (D.Out,))
        rt.submit("long_b", (y,), (D.Out,))
        rt.submit("reduce", (x, y), (D.In, D.In))

    kernels = {"long_a": CountingKernel("long_a", lambda x: time.sleep(0.15)),
               "long_b": CountingKernel("long_b", lambda y: time.sleep(0.15)),
               "reduce": CountingKernel("reduce", lambda x, y: None)}
    sig = [ParamSpec("x", FP32, (4,), D.Out), ParamSpec("y", FP32, (4,), D.Out)]
    prog = CompiledProgram("two_long", sig, orchestration, kernels)
    config = RunConfig(workers=2, profiling=True, profile_dir=str(tmp_path))
    with ChipWorker(config) as worker:
        worker.run(prog, torch.zeros(4), torch.zeros(4))
        trace = json.loads(open(worker.last_profile).read())
        summary = worker.last_summary
    assert summary.startswith("plang run: 3 tasks") and summary in capsys.readouterr().out
    lanes = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert lanes == {"core-0", "core-1"}
    slices = {e["name"]: e for e in trace["traceEvents"] if e["ph"] == "X"}
    a, b, r = slices["long_a"], slices["long_b"], slices["reduce"]
    assert a["tid"] != b["tid"]
    assert a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]  # they overlap in time
    assert sorted(r["args"]["deps"]) == sorted([a["args"]["task"], b["args"]["task"]])
    assert r["ts"] >= max(a["ts"] + a["dur"], b["ts"] + b["dur"]) - 1


def test_chip_worker_is_a_worker_of_the_tensormap_runtime():
    from plang.runtime import Worker

    assert issubclass(ChipWorker, Worker)
    with pytest.raises(TypeError):
        Worker()  # the shared surface is abstract
    with ChipWorker(runtime="tensormap_and_ringbuffer") as w:
        a = w.alloc_tensor((8, 4), FP32, init=1.0)
        out = torch.zeros(8, 4)
        w.register(add_program())(a, a, out)
        assert torch.equal(out, torch.full((8, 4), 4.0))
    with pytest.raises(ValueError, match="runtime 'host_build_graph' is not available"):
        ChipWorker(runtime="host_build_graph")


def test_pto_isa_root_holds_the_reference_abi_headers():
    import os

    from plang.runtime import ensure_pto_isa_root

    root = ensure_pto_isa_root()
    assert os.environ["PTO_ISA_ROOT"] == root
    assert {"tensor.h", "intrinsic.h"} <= set(os.listdir(root))
    assert "PTO_CPUSTUB_HPP" in open(os.path.join(root, "pto", "pto-inst.hpp")).read()
