"""A port of a well-known IRON design: the tiled vector add of mlir-aie's programming
examples (``basic/vector_vector_add``), spread over several columns.

The IRON original streams two input vectors tile by tile through ObjectFifos into one
compute tile, whose core adds each pair of tiles into an output fifo the host drains. Here
the same structure runs on plang's simulated chip: per column one Worker and three fifos;
the Runtime sequence gives column k every `columns`-th tile of each input through a tensor
access pattern (offset k * tile, sizes [tiles / columns, tile], strides [columns * tile, 1])
and drains its results through the same walk. The element loop of the original core is a C
kernel here (`ExternalFunction`): Worker bodies run as Python, kernels natively.
"""

import numpy as np
import torch

import plang.iron as iron
from plang.iron import (
    CompileTime,
    ExternalFunction,
    In,
    ObjectFifo,
    Out,
    Program,
    Runtime,
    TensorAccessPattern,
    Worker,
)

ADD_SRC = r"""
#include <cstdint>
extern "C" void vadd_f32(const float *__restrict a, const float *__restrict b,
                         float *__restrict c, int32_t n) {
    for (int32_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""


@iron.jit
def vector_add(a: In, b: In, c: Out, *, tile: CompileTime[int] = 4096,
               columns: CompileTime[int] = 2):
    n = a.shape[0]
    if n % (tile * columns):
        raise ValueError(f"{n} elements do not split into {columns} columns of {tile}-element tiles")
    steps = n // (tile * columns)
    tile_ty = np.ndarray[(tile,), np.dtype[np.float32]]
    add = ExternalFunction("vadd_f32", source_string=ADD_SRC,
                           arg_types=[tile_ty, tile_ty, tile_ty, np.int32])
    ins_a = [ObjectFifo(tile_ty, name=f"a{k}") for k in range(columns)]
    ins_b = [ObjectFifo(tile_ty, name=f"b{k}") for k in range(columns)]
    outs = [ObjectFifo(tile_ty, name=f"c{k}") for k in range(columns)]

    def core(in1, in2, out, kernel):
        for _ in iron.range_(steps):
            x, y, z = in1.acquire(1), in2.acquire(1), out.acquire(1)
            kernel(x, y, z, tile)
            in1.release(1)
            in2.release(1)
            out.release(1)

    workers = [Worker(core, [ins_a[k].cons(), ins_b[k].cons(), outs[k].prod(), add],
                      tile=iron.Tile(k % iron.Device().cols, 2 + k // iron.Device().cols),
                      while_true=False)
               for k in range(columns)]
    walks = [TensorAccessPattern((n,), k * tile, [steps, tile], [columns * tile, 1])
             for k in range(columns)]

    def sequence(A, B, C, a_h, b_h, c_h):
        for k in range(columns):
            a_h[k].fill(A, tap=walks[k])
            b_h[k].fill(B, tap=walks[k])
        for k in range(columns):
            c_h[k].drain(C, tap=walks[k], wait=True)

    rt = Runtime(sequence, [a, b, c, [f.prod() for f in ins_a], [f.prod() for f in ins_b],
                            [f.cons() for f in outs]])
    return Program(iron.get_current_device(), rt, workers=workers)


if __name__ == "__main__":
    n = 1 << 20
    a, b = torch.randn(n), torch.randn(n)
    c = torch.zeros(n)
    vector_add(a, b, c)
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    c1 = torch.zeros(n)
    vector_add(a, b, c1, tile=1024, columns=1)  # one column, as the original design
    assert torch.equal(c1, a + b)
    print(f"tiled vector add over 2 columns and over 1, {n} fp32 elements, checked against "
          "torch.add: OK")
