"""A hand-written C++ kernel in a plang program, next to a generated one.

`@pl.function(type=pl.FunctionType.AIV, external_source=...)` declares a vector kernel whose
body is `...`: plang takes its signature from the annotations, compiles the named C++ file
(`12_external_cpp_kernel.cpp`) with the system compiler instead of generating code, and the
orchestration launches it like any other kernel. Here it computes softplus(x); a generated
InCore kernel then adds the residual: out = x + softplus(x).

A `@pl.program` is lowered with the pass pipeline and compiled into a runnable program
(kernels + orchestration) that runs on the default simulated chip.
"""

from pathlib import Path

import torch

import plang as pl
from plang.runtime import RunConfig

ROWS, COLS = 64, 128
KERNEL_SOURCE = str(Path(__file__).with_name("12_external_cpp_kernel.cpp"))


@pl.program
class SoftplusResidual:
    @pl.function(type=pl.FunctionType.AIV, external_source=KERNEL_SOURCE)
    def softplus(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
                 out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        ...  # implemented in C++

    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[ROWS, COLS], pl.FP32], b: pl.Tensor[[ROWS, COLS], pl.FP32],
            out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        ta = pl.load(a, [0, 0], [ROWS, COLS])
        tb = pl.load(b, [0, 0], [ROWS, COLS])
        out = pl.store(pl.add(ta, tb), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        sp = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        sp = self.softplus(x, sp)
        out = self.add(x, sp, out)
        return out


if __name__ == "__main__":
    config = RunConfig()
    compiled = pl.compile(SoftplusResidual, config, entry="main")
    x = torch.randn(ROWS, COLS) * 10
    out = torch.empty(ROWS, COLS)
    compiled(x, out)
    torch.testing.assert_close(out, x + torch.nn.functional.softplus(x), rtol=1e-5, atol=1e-5)
    print(f"external C++ kernel: out = x + softplus(x) on {ROWS}x{COLS}, softplus from "
          f"{Path(KERNEL_SOURCE).name}, checked against torch: OK")
