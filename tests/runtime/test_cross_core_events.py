"""The explicit cross-core events `pl.system.sync_set` / `sync_wait` (the reference's FFTS
mode 2): a GM handoff between hand-written AIC and AIV kernels of one Group is ordered by
them alone, in both directions; in a mixed kernel they stay on the side their `core_type`
names."""

import pytest
import torch

import plang as pl

# the producer works this long before its store, so a consumer that did not wait would read
# the tensor's old contents
DELAY = 400


def _program(cube_first: bool):
    """cube_first: the AIC computes a[:16] @ w into `mid`, sets event 3, and each AIV lane waits,
    then adds 1 to its half of the rows; else each lane writes its half of a + 1 into `mid`,
    sets event 4, and the AIC waits for both before a matmul."""

    @pl.program
    class Events:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[17, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32],
                 mid: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            if cube_first:
                acc = pl.matmul(pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat),
                                pl.load(w, [0, 0], [16, 16], target_memory=pl.Mem.Mat))
                for i in pl.range(DELAY * 20):  # adds a @ mid, while mid is still all zeros
                    acc = pl.matmul_acc(acc, pl.load(a, [i % 2, 0], [16, 16], target_memory=pl.Mem.Mat),
                                        pl.load(mid, [0, 0], [16, 16], target_memory=pl.Mem.Mat))
                pl.store(acc, [0, 0], mid)
                pl.system.sync_set(3, pipe=pl.PipeType.FIX, ffts_mode=2)
            else:
                pl.system.sync_wait(4, pipe=pl.PipeType.MTE2)
                acc = pl.matmul(pl.load(mid, [0, 0], [16, 16], target_memory=pl.Mem.Mat),
                                pl.load(w, [0, 0], [16, 16], target_memory=pl.Mem.Mat))
                pl.store(acc, [0, 0], out)

        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, a: pl.Tensor[[17, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32],
                   mid: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                   out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            row = pl.tile.get_subblock_idx() * 8
            if cube_first:
                pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)
                out = pl.store(pl.add(pl.load(mid, [row, 0], [8, 16]), 1.0), [row, 0], out)
            else:
                t = pl.load(a, [row, 0], [8, 16])
                for _ in pl.range(DELAY * 50):
                    t = pl.add(t, 0.0)
                pl.store(pl.add(t, 1.0), [row, 0], mid)
                pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: pl.Tensor[[17, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32],
                  mid: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(a, w, mid, out)
            return self.vector(a, w, mid, out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[17, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32],
                 mid: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return self.group(a, w, mid, out)

    return Events


@pytest.mark.parametrize("cube_first", [False, True], ids=["aiv_to_aic", "aic_to_aiv"])
def test_an_event_orders_a_gm_handoff(cube_first):
    a, w = torch.randn(17, 16), torch.randn(16, 16)
    mid, out = torch.zeros(16, 16), torch.zeros(16, 16)
    pl.compile(_program(cube_first))(a, w, mid, out)
    if cube_first:
        expect = a[:16] @ w + 1
    else:
        expect = (a[:16] + 1) @ w
    torch.testing.assert_close(out, expect, rtol=1e-4, atol=1e-4)


@pl.jit
def lanes_then_cube(a: pl.Tensor, w: pl.Tensor, mid: pl.InOut[pl.Tensor], out: pl.Out[pl.Tensor]):
    # the reference's pattern: each lane of a NONE region stores its rows (one store per
    # branch), signals, and the cube waits; sync_set / sync_wait stay on their core_type's side
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            if lane == 0:
                pl.store(pl.exp(pl.load(a, [0, 0], [2, 16])), [0, 0], mid)
            else:
                pl.store(pl.exp(pl.load(a, [2, 0], [3, 16])), [2, 0], mid)
            pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type="aiv")
        pl.system.sync_wait(4, pipe=pl.PipeType.MTE2, core_type="aic")
        m = pl.load(mid, [0, 0], [16, 16], valid_shape=[5, 16], target_memory=pl.Mem.Mat)
        out = pl.store(pl.matmul(m, pl.load(w, [0, 0], [16, 16], target_memory=pl.Mem.Mat)), [0, 0], out)
    return out


def test_events_in_a_mixed_kernel_stay_on_their_side():
    a, w = torch.randn(5, 16), torch.randn(16, 16)
    mid, out = torch.zeros(16, 16), torch.full((16, 16), float("nan"))
    lanes_then_cube(a, w, mid, out)
    expect = torch.full((16, 16), float("nan"))
    expect[:5] = a.exp() @ w
    torch.testing.assert_close(out, expect, equal_nan=True, rtol=1e-4, atol=1e-4)


def _lone_vector_kernel(ffts_mode: int):
    """A program whose one AIV kernel, launched on its own, sets event 2."""

    @pl.program
    class Lone:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            pl.system.sync_set(2, pipe=pl.PipeType.MTE3, ffts_mode=ffts_mode)
            return pl.store(pl.full([16, 16], dtype=pl.FP32, value=1.0), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return self.vector(out)

    return Lone


def test_an_event_among_cores_of_one_type_is_a_clear_error():
    with pytest.raises(pl.errors.Error, match=r"system\.sync_set: ffts_mode=0 .* not supported"):
        pl.compile(_lone_vector_kernel(0))(torch.zeros(16, 16))


def test_an_event_outside_a_group_is_a_clear_error():
    with pytest.raises(pl.errors.Error, match=r"uses cross-core event 2 \(to AIC, AIV lane 0\) but was "
                                              r"launched outside a Group"):
        pl.compile(_lone_vector_kernel(2))(torch.zeros(16, 16))
