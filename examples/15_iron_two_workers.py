"""An IRON design on the simulated chip: two Workers joined by a depth-2 ObjectFifo.

`plang.iron` runs designs written for IRON (AMD's Python API for Ryzen AI NPUs). Here the
Runtime sequence fills fifo "in" from tensor `a` and the one-object fifo "bias" from `b`;
Worker `scale_core` multiplies each 1024-element object by 3 with a C++ kernel
(`ExternalFunction`, compiled by the system compiler, called natively) and passes it on
through the depth-2 fifo "mid"; Worker `add_core` adds the bias with a torch op on the
acquired slot; the sequence drains fifo "out" into `c`. One call is one Group task: each
Worker on its own core thread, each fifo a bounded ring. `enable_trace` writes a Perfetto
trace with a lane per Worker.
"""

import json

import numpy as np
import torch

import plang.iron as iron
from plang.iron import CompileTime, ExternalFunction, In, ObjectFifo, Out, Program, Runtime, Worker
from plang.runtime import RunConfig

SCALE_SRC = r"""
#include <cstdint>
extern "C" void scale_i32(const int32_t *in, int32_t *out, int32_t factor, int32_t n) {
    for (int32_t i = 0; i < n; ++i) out[i] = in[i] * factor;
}
"""


@iron.jit
def scale_then_add(a: In, b: In, c: Out, *, tile: CompileTime[int] = 1024):
    n = a.shape[0]  # a is an operand: its shape and dtype, no data
    tile_ty = np.ndarray[(tile,), np.dtype[np.int32]]
    one_ty = np.ndarray[(1,), np.dtype[np.int32]]
    scale = ExternalFunction("scale_i32", source_string=SCALE_SRC,
                             arg_types=[tile_ty, tile_ty, np.int32, np.int32])
    of_in = ObjectFifo(tile_ty, name="in")
    of_mid = ObjectFifo(tile_ty, name="mid", depth=2)  # the fifo joining the two Workers
    of_out = ObjectFifo(tile_ty, name="out")
    of_bias = ObjectFifo(one_ty, name="bias", depth=1)

    def scale_core(src, dst, kernel):
        for _ in iron.range_(n // tile):
            x, y = src.acquire(1), dst.acquire(1)
            kernel(x, y, 3, tile)
            src.release(1)
            dst.release(1)

    def add_core(src, dst, bias):
        k = bias.acquire(1)
        for _ in iron.range_(n // tile):
            y, z = src.acquire(1), dst.acquire(1)
            torch.add(y, k[0], out=z)
            src.release(1)
            dst.release(1)
        bias.release(1)

    w1 = Worker(scale_core, [of_in.cons(), of_mid.prod(), scale], while_true=False)
    w2 = Worker(add_core, [of_mid.cons(), of_out.prod(), of_bias.cons()], while_true=False)

    def sequence(A, B, C, in_h, bias_h, out_h):
        in_h.fill(A)
        bias_h.fill(B)
        out_h.drain(C, wait=True)

    rt = Runtime(sequence, [a, b, c, of_in.prod(), of_bias.prod(), of_out.cons()])
    program = Program(iron.get_current_device(), rt, workers=[w1, w2])
    program.enable_trace(trace_size=1 << 16)
    return program


if __name__ == "__main__":
    a = torch.randint(-1000, 1000, (64 * 1024,), dtype=torch.int32)
    b = torch.tensor([7], dtype=torch.int32)
    c = torch.zeros_like(a)
    scale_then_add(a, b, c, config=RunConfig(pipe_timeout=10.0))
    assert torch.equal(c, a * 3 + 7)
    c.zero_()
    scale_then_add(a, b, c, tile=512)  # a new CompileTime value: a second build
    assert torch.equal(c, a * 3 + 7) and iron.COUNTERS["builds"] == 2

    events = json.load(open(scale_then_add.last_trace))["traceEvents"]
    lanes = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    kernel_calls = sum(1 for e in events if e["name"] == "kernel scale_i32")
    assert {"scale_core", "add_core", "shim"} <= lanes and kernel_calls == a.numel() // 512
    print(f"two Workers, depth-2 fifo 'mid', C++ kernel: c = 3 * a + 7 on {a.numel()} int32 "
          f"checked against torch: OK (trace {scale_then_add.last_trace}: lanes "
          f"{sorted(lanes & {'scale_core', 'add_core', 'shim'})}, {kernel_calls} kernel slices)")
