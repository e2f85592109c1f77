"""A hand-wired task graph: two independent kernels and one that depends on both.

`pl.submit(kernel, *args)` launches a kernel as a task and returns `(result, task_id)`;
`deps=[...]` adds explicit edges to earlier tasks. Inside `with pl.manual_scope():` the
runtime tracks no dependencies by itself (no automatic read-after-write edges from the
tensors' byte ranges), so every edge is the one the program declares: the two `square`
tasks may run at the same time on different cores, and `combine` waits for both.

The run is profiled: the swimlane trace (Chrome trace / Perfetto JSON) records which tasks
each kernel execution waited for, and the script checks the graph from it.
"""

import json
import tempfile

import torch

import plang as pl
from plang.runtime import ChipWorker, RunConfig

N = 64


# kernels that only receive tensors created inside the entry are annotated with full shapes
@pl.jit.incore
def square(x: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.load(x, [0, 0], [N, N])
    out = pl.store(pl.mul(t, t), [0, 0], out)
    return out


@pl.jit.incore
def combine(a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    ta = pl.load(a, [0, 0], [N, N])
    tb = pl.load(b, [0, 0], [N, N])
    out = pl.store(pl.add(ta, tb), [0, 0], out)
    return out


@pl.jit
def sum_of_squares(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        sx = pl.create_tensor([N, N], dtype=pl.FP32)  # intermediates live in the chip's DDR
        sy = pl.create_tensor([N, N], dtype=pl.FP32)
        sx, t_x = pl.submit(square, x, sx)
        sy, t_y = pl.submit(square, y, sy)
        out, t_out = pl.submit(combine, sx, sy, out, deps=[t_x, t_y])
    return out


if __name__ == "__main__":
    x, y, out = torch.randn(N, N), torch.randn(N, N), torch.empty(N, N)
    with tempfile.TemporaryDirectory() as traces:
        with ChipWorker(RunConfig(profiling=True, profile_dir=traces)) as worker:
            sum_of_squares(x, y, out)  # runs on the worker entered above
            with open(worker.last_profile) as f:
                events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    torch.testing.assert_close(out, x * x + y * y, rtol=1e-5, atol=1e-5)

    squares = [e for e in events if e["name"] == "square"]
    (last,) = [e for e in events if e["name"] == "combine"]
    assert sorted(last["args"]["deps"]) == sorted(e["args"]["task"] for e in squares)
    assert last["ts"] >= max(e["ts"] + e["dur"] for e in squares)
    print(f"task graph: square(x), square(y) -> combine (deps {last['args']['deps']}), "
          f"out = x*x + y*y checked against torch: OK")
