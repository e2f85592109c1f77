"""Orchestration forms of reference programs: `pl.assemble` in an orchestration function (a
copy of a kernel's result into a window of another tensor, made once the kernel is done,
converting the dtype and filling the trailing dims of a higher-rank target), a `pl.spmd`
scope around a kernel with two outputs, and a UINT32 parameter given an int32 tensor."""

from __future__ import annotations

import torch

import plang as pl


@pl.program
class Chunks:
    @pl.function(type=pl.FunctionType.InCore)
    def compute(self, x: pl.Tensor[[4, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 16])
        return pl.store(pl.mul(t, 3.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 4, 16], pl.BF16]]) -> pl.Tensor[[2, 4, 16], pl.BF16]:
        for b in pl.range(2):
            chunk: pl.Tensor[[4, 16], pl.FP32] = pl.create_tensor([4, 16], dtype=pl.FP32)
            chunk = self.compute(x, chunk)
            out = pl.assemble(out, chunk, [b, 0, 0])
        return out


def test_orchestration_assemble_copies_after_the_kernel():
    x, out = torch.randn(4, 16), torch.zeros(2, 4, 16, dtype=torch.bfloat16)
    pl.compile(Chunks, entry="main")(x, out)
    assert torch.equal(out, (3 * x).to(torch.bfloat16).expand(2, 4, 16))


@pl.program
class TwoOutputs:
    @pl.function(type=pl.FunctionType.InCore)
    def both(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> tuple[pl.Tensor[[8, 16], pl.FP32],
                                                             pl.Tensor[[8, 16], pl.FP32]]:
        t = pl.load(x, [0, 0], [8, 16])
        y = pl.store(pl.add(t, 1.0), [0, 0], y)
        z = pl.store(pl.mul(t, 2.0), [0, 0], z)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> tuple[pl.Tensor[[8, 16], pl.FP32],
                                                             pl.Tensor[[8, 16], pl.FP32]]:
        with pl.spmd(1, name_hint="pair"):
            y, z = self.both(x, y, z)
        return y, z


def test_an_spmd_scope_around_a_two_output_kernel_unpacks_after_the_launch():
    x, y, z = torch.randn(8, 16), torch.zeros(8, 16), torch.zeros(8, 16)
    pl.compile(TwoOutputs, entry="main")(x, y, z)
    assert torch.equal(y, x + 1) and torch.equal(z, x * 2)


@pl.program
class Counter:
    @pl.function(type=pl.FunctionType.InCore)
    def count(self, out: pl.Out[pl.Tensor[[1, 64], pl.UINT32]]) -> pl.Tensor[[1, 64], pl.UINT32]:
        t = pl.tile.arange(pl.cast(4294967290, pl.UINT32), [1, 64], dtype=pl.UINT32)
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[1, 64], pl.UINT32]]) -> pl.Tensor[[1, 64], pl.UINT32]:
        out = self.count(out)
        return out


def test_an_unsigned_parameter_takes_the_signed_torch_tensor_of_its_width():
    out = torch.zeros(1, 64, dtype=torch.int32)  # the reference's harnesses pass UINT32 so
    pl.compile(Counter, entry="main")(out)
    want = (torch.arange(64, dtype=torch.int64) + 4294967290) % 2**32
    assert torch.equal(out.view(torch.uint32).to(torch.int64), want[None])
