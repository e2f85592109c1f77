"""Tile creation and data movement ops (full, fillpad, slice, assemble, concat, reshape,
transpose, read / write, move) through the MLIR path; all exact."""

from __future__ import annotations

import pytest
import torch
from _kernel_util import tile_kernel

from plang.dtypes import FP32, INT16, DataType
from plang.ir.enums import MemorySpace, PadValue
from plang.ir.ops import make_call


def test_full_and_adds_on_int16() -> None:
    k = tile_kernel("full", [INT16], INT16, (4, 33), (4, 33), (0, 0),
                    lambda b, t: make_call("tile.add", [t[0], b.let("f", make_call(
                        "tile.full", [[4, 33]], {"dtype": INT16, "value": 7}))]))
    x = torch.randint(-100, 100, (4, 33), dtype=torch.int16)
    out = torch.zeros_like(x)
    k(x, out)
    assert torch.equal(out, x + 7)


def test_fillpad_outside_valid_region() -> None:
    k = tile_kernel("fillpad", [FP32], FP32, (6, 40), (6, 40), (0, 0),
                    lambda b, t: make_call("tile.fillpad", [t[0]], {"pad_value": PadValue.max}),
                    valid=(4, 25))
    x = torch.randn(6, 40)
    out = torch.zeros(6, 40)
    k(x, out)
    want = torch.full((6, 40), float("inf"))
    want[:4, :25] = x[:4, :25]
    assert torch.equal(out, want)


def test_slice_then_assemble_and_concat() -> None:
    def body(b, t):
        s = b.let("s", make_call("tile.slice", [t[0], [3, 20], [2, 5]]))
        c = b.let("c", make_call("tile.concat", [s, s]))
        z = b.let("z", make_call("tile.full", [[8, 64]], {"dtype": FP32, "value": 0.0}))
        return make_call("tile.assemble", [z, c, [1, 3]])

    k = tile_kernel("slc", [FP32], FP32, (8, 64), (8, 64), (0, 0), body)
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    k(x, out)
    want = torch.zeros(8, 64)
    part = x[2:5, 5:25]
    want[1:4, 3:23] = part
    want[1:4, 23:43] = part
    assert torch.equal(out, want)


def test_reshape_and_transpose() -> None:
    def body(b, t):
        r = b.let("r", make_call("tile.reshape", [t[0], [12, 4]]))
        return make_call("tile.transpose", [r, 0, 1])

    k = tile_kernel("rt", [FP32], FP32, (6, 8), (6, 8), (0, 0), body, out_tile_shape=(4, 12))
    x = torch.randn(6, 8)
    out = torch.zeros(4, 12)
    k(x, out)
    assert torch.equal(out, x.reshape(12, 4).t())


@pytest.mark.parametrize("dtype, shape", [("FP32", (32, 48)), ("BF16", (16, 64)), ("INT32", (64, 128)),
                                          ("FP16", (48, 16)), ("FP32", (20, 16))])
def test_transpose_matches_torch(dtype: str, shape: tuple[int, int]) -> None:
    """16 x 16 blocks of 16- / 32-bit elements go through the in-register block transpose,
    other shapes (20 rows) element by element; both exact."""
    d = DataType.from_name(dtype)
    k = tile_kernel("tr", [d], d, shape, shape, (0, 0),
                    lambda b, t: make_call("tile.transpose", [t[0], 0, 1]), out_tile_shape=shape[::-1])
    x = (torch.randn(*shape) * 100).to(d.to_torch())
    out = torch.zeros(*shape[::-1], dtype=d.to_torch())
    k(x, out)
    assert torch.equal(out, x.t())


def test_read_write_and_move() -> None:
    def body(b, t):
        v = b.let("v", make_call("tile.read", [t[0], [1, 2]]))
        w = b.let("w", make_call("tile.write", [t[0], [0, 0], v]))
        return make_call("tile.move", [w], {"target_memory": MemorySpace.Vec})

    k = tile_kernel("rw", [FP32], FP32, (3, 5), (3, 5), (0, 0), body)
    x = torch.randn(3, 5)
    out = torch.zeros(3, 5)
    k(x, out)
    want = x.clone()
    want[0, 0] = x[1, 2]
    assert torch.equal(out, want)


def test_write_into_a_fused_move_leaves_the_moved_tile() -> None:
    """A write whose destination is a fused move of a tile read afterwards writes a copy: a
    fused move hands a reader the tile's own buffer, a writer never (out = e + w differs
    from e + e at [0, 0] only)."""
    def body(b, t):
        e = b.let("e", make_call("tile.exp", [t[0]]))
        moved = make_call("tile.move", [e], {"target_memory": MemorySpace.Vec})
        w = b.let("w", make_call("tile.write", [moved, [0, 0], 100.0]))
        return make_call("tile.add", [e, w])

    k = tile_kernel("write_moved", [FP32], FP32, (3, 5), (3, 5), (0, 0), body)
    x = torch.randn(3, 5)
    out = torch.zeros(3, 5)
    k(x, out)
    want = 2 * torch.exp(x)
    want[0, 0] = torch.exp(x[0, 0]) + 100.0
    torch.testing.assert_close(out, want)


def _move_kernel(cast: bool):
    """e = exp(x) once; three times: m = move(e) (or cast(e) to its own dtype), m + m summed
    into a carried accumulator whose last step is itself a move (the yield's buffer is its
    destination): out = 6 * exp(x)."""
    from plang.codegen.kernel import compile_kernel
    from plang.dtypes import FP32 as F
    from plang.ir import FunctionType, ParamDirection, TensorType
    from plang.ir.builder import IRBuilder

    b = IRBuilder()
    with b.function("moves", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([8, 64], F))
        out = f.param("out", TensorType([8, 64], F), ParamDirection.Out)
        e = b.let("e", make_call("tile.exp", [b.let("t", make_call("tile.load", [x, [0, 0], [8, 64]]))]))
        zero = b.let("z", make_call("tile.full", [[8, 64]], {"dtype": F, "value": 0.0}))
        with b.for_range("i", 0, 3, 1, iter_args=[("acc", zero)]) as loop:
            same = (make_call("tile.cast", [e], {"target_type": F}) if cast
                    else make_call("tile.move", [e], {"target_memory": MemorySpace.Left}))
            m = b.let("m", same)
            s = b.let("s", make_call("tile.add", [m, m]))
            total = b.let("total", make_call("tile.add", [loop.iter_args[0], s]))
            b.yield_(b.let("moved", make_call("tile.move", [total], {"target_memory": MemorySpace.Vec})))
        b.eval(make_call("tile.store", [loop.return_vars[0], [0, 0], out]))
    return compile_kernel(f.function)


@pytest.mark.parametrize("cast", [False, True])
def test_a_move_of_a_dying_tile_takes_its_buffer(cast: bool) -> None:
    """A move (or a same-dtype cast) of a tile nothing else reads is that tile's buffer: no
    copy, even read in every step of a loop; a move whose result the loop carries still
    goes into the carried buffer."""
    k = _move_kernel(cast)
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    k(x, out)
    torch.testing.assert_close(out, 6 * torch.exp(x), rtol=1e-6, atol=1e-6)
    # e, z, the carried accumulator and the carried move's result: none for m
    assert k.mlir_text.count("memref.alloca() {alignment = 64 : i64} : memref<512xf32>") == 4
