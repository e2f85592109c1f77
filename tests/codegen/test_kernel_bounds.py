"""Bounds checks of kernel loads, stores and element reads through `@pl.jit`: a runtime
offset outside the tensor raises `BoundsError` at the user's line naming the tensor, the
axis, the offset and the extent, before anything is written (guard zones around the
argument stay untouched); a valid region inside the tensor, and `clamp=True` loads, still
run; static offsets out of range are located compile-time errors."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.runtime import BoundsError, TaskError

GUARD = 16  # rows of guard zone on each side of the output


@pl.jit.incore
def store_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    t = pl.load(a, [0, 0], [8, 64])
    c = pl.store(t, [n, 0], c)
    return c


@pl.jit
def store_at(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    c = store_kernel(a, c, n)
    return c


@pl.jit.incore
def load_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    t = pl.load(a, [n, 0], [8, 64])
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def load_at(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    c = load_kernel(a, c, n)
    return c


@pl.jit.incore
def clamped_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    t = pl.load(a, [n, 0], [8, 64], clamp=True)
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def load_clamped(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    c = clamped_kernel(a, c, n)
    return c


@pl.jit.incore
def ragged_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    for i in pl.range(0, rows, 8):
        t = pl.load(a, [i, 0], [8, 64], valid_shape=[pl.min(8, rows - i), 64])
        c = pl.store(t, [i, 0], c)
    return c


@pl.jit
def ragged_copy(a: pl.Tensor, c: pl.Out[pl.Tensor], rows: pl.Scalar[pl.INDEX]):
    c = ragged_kernel(a, c, rows)
    return c


@pl.jit.incore
def rows_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    for i in pl.range(4):
        t = pl.load(a, [0, 0], [8, 64])
        c = pl.store(t, [8 * i - n, 0], c)
    return c


@pl.jit
def rows_from(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    c = rows_kernel(a, c, n)
    return c


def _line_of(text: str) -> int:
    """The line of this file holding `text`."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _guarded(rows: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """(buffer, view): a zero output of `rows` rows with GUARD rows of 7.0 on each side."""
    buf = torch.full((rows + 2 * GUARD, 64), 7.0)
    out = buf[GUARD:GUARD + rows]
    out.zero_()
    return buf, out


def _guards_intact(buf: torch.Tensor) -> bool:
    return bool((buf[:GUARD] == 7).all() and (buf[-GUARD:] == 7).all())


def test_in_bounds_store_runs() -> None:
    a = torch.randn(8, 64)
    buf, out = _guarded()
    store_at(a, out, 56)
    assert torch.equal(out[56:], a) and not out[:56].any() and _guards_intact(buf)


@pytest.mark.parametrize("n, why", [(-8, "offset -8 is negative"),
                                    (57, r"offset 57 \+ extent 8 = 65 exceeds the tensor's extent 64"),
                                    (1 << 40, r"offset 1099511627776 \+ extent 8 = 1099511627784 exceeds")])
def test_out_of_bounds_store_raises_before_writing(n: int, why: str) -> None:
    a = torch.randn(8, 64)
    buf, out = _guarded()
    with pytest.raises(TaskError, match=r"tile.store out of bounds of tensor 'c' \(shape \[64, 64\]\) "
                                        rf"on axis 0: {why}") as info:
        store_at(a, out, n)
    cause = info.value.__cause__
    assert isinstance(cause, BoundsError) and isinstance(cause, pl.Error)
    assert cause.span.begin_line == _line_of("c = pl.store(t, [n, 0], c)")
    assert "c = pl.store(t, [n, 0], c)" in str(cause)
    assert not out.any() and _guards_intact(buf)


def test_load_past_the_end_raises_as_in_the_reference() -> None:
    a, out = torch.randn(16, 64), torch.zeros(8, 64)
    load_at(a, out, 8)
    assert torch.equal(out, a[8:])
    for n, why in ((9, r"offset 9 \+ extent 8 = 17 exceeds the tensor's extent 16"),
                   (-1, "offset -1 is negative")):
        out.zero_()
        with pytest.raises(TaskError, match=rf"tile.load out of bounds of tensor 'a' .* on axis 0: {why}"):
            load_at(a, out, n)
        assert not out.any()


def test_clamped_load_reads_zeros_past_the_end_but_no_negative_offset() -> None:
    a, out = torch.randn(16, 64), torch.full((8, 64), 3.0)
    load_clamped(a, out, 12)
    assert torch.equal(out[:4], a[12:]) and not out[4:].any()
    with pytest.raises(TaskError, match="offset -1 is negative"):
        load_clamped(a, out, -1)


def test_valid_region_inside_the_tensor_is_fine() -> None:
    """The ragged-tail idiom: a [8, 64] window whose valid rows end at the tensor's edge."""
    a = torch.randn(29, 64)
    buf = torch.full((29 + GUARD, 64), 7.0)
    out = buf[:29]
    ragged_copy(a, out, 29)
    assert torch.equal(out, a) and bool((buf[29:] == 7).all())


def test_a_failed_check_stops_the_kernel_before_it_writes_again() -> None:
    """Iteration 0 stores at -8 and fails; iterations 1-3 would be in bounds but the kernel
    is cancelled: nothing is written."""
    a = torch.randn(8, 64)
    buf, out = _guarded(32)
    with pytest.raises(TaskError, match="offset -8 is negative"):
        rows_from(a, out, 8)
    assert not out.any() and _guards_intact(buf)
    rows_from(a, out, 0)
    assert torch.equal(out, a.repeat(4, 1))


def test_static_offset_out_of_range_is_a_located_compile_error() -> None:
    @pl.jit.incore
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        t = pl.load(a, [0, 0], [8, 64])
        c = pl.store(t, [60, 0], c)
        return c

    @pl.jit
    def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        c = bad(a, c)
        return c

    with pytest.raises(pl.Error, match=r"store window \[60, 68\) on axis 0 exceeds output tensor") as info:
        entry(torch.randn(8, 64), torch.zeros(64, 64))
    assert info.value.span.begin_line == _line_of("c = pl.store(t, [60, 0], c)")


@pl.jit.incore
def tile_window_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    t = pl.load(a, [0, 0], [8, 64])
    s = pl.slice(t, [8, 32], [0, n])
    z = pl.full([8, 64], dtype=pl.FP32, value=0.0)
    z = pl.assemble(z, s, [0, 64 - n])
    c = pl.store(z, [0, 0], c)
    return c


@pl.jit
def tile_window(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    c = tile_window_kernel(a, c, n)
    return c


def test_on_chip_windows_are_checked_against_their_tile() -> None:
    """`pl.slice` / `pl.assemble` of tiles at runtime offsets never leave the tile buffer."""
    a, c = torch.randn(8, 64), torch.zeros(8, 64)
    tile_window(a, c, 32)
    want = torch.zeros(8, 64)
    want[:, 32:] = a[:, 32:]
    assert torch.equal(c, want)
    with pytest.raises(TaskError, match=r"tile.slice out of bounds of tile 't' \(shape \[8, 64\]\) "
                                        r"on axis 1: offset 40 \+ extent 32 = 72 exceeds the tile's extent"):
        tile_window(a, c, 40)
    with pytest.raises(TaskError, match=r"tile.assemble out of bounds of tile 'z' .* on axis 1: "
                                        r"offset 48 \+ extent 32 = 80 exceeds the tile's extent 64"):
        tile_window(a, c, 16)


def test_a_persisted_kernel_keeps_its_checks(tmp_path) -> None:
    """`Kernel.save` / `load_kernel` (the disk cache's path) keep the check sites: a loaded
    kernel still raises at the user's line."""
    from plang.codegen.kernel import load_kernel

    a, out = torch.randn(8, 64), torch.zeros(64, 64)
    kernel = store_at.compile(a, out, 0).kernels["store_kernel"].kernel
    path = str(tmp_path / "store_kernel.so")
    kernel.save(path)
    loaded = load_kernel(path)
    loaded(a, out, 8)
    assert torch.equal(out[8:16], a)
    with pytest.raises(BoundsError, match=r"tile.store out of bounds of tensor 'c' .* offset 60 \+") as info:
        loaded(a, out, 60)
    assert info.value.span.begin_line == _line_of("c = pl.store(t, [n, 0], c)")


@pl.jit.incore
def read_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    x = pl.read(a, [i, 3])
    t = pl.full([8, 64], dtype=pl.FP32, value=x)
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def read_at(a: pl.Tensor, c: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    c = read_kernel(a, c, i)
    return c


def test_element_reads_in_a_kernel_are_checked() -> None:
    a, c = torch.randn(16, 8), torch.zeros(8, 64)
    read_at(a, c, 15)
    assert bool((c == a[15, 3]).all())
    for i, why in ((16, r"offset 16 \+ extent 1 = 17 exceeds the tensor's extent 16"),
                   (-2, "offset -2 is negative")):
        with pytest.raises(TaskError, match=rf"tensor.read out of bounds of tensor 'a' .* on axis 0: {why}"):
            read_at(a, c, i)


@pl.jit.incore
def oversized_valid_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    t = pl.load(a, [0, 0], [16, 16], valid_shape=[n, 16])
    return pl.store(pl.add(t, 1.0), [0, 0], c)


@pl.jit
def oversized_valid(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    return oversized_valid_kernel(a, c, n)


def test_a_runtime_valid_shape_larger_than_its_tile_is_clipped_to_the_tile():
    """A valid extent of 40 rows on a 16-row tile (inside the 64-row tensor) covers the tile's
    16 rows only: nothing is read or written past the tile's buffer, on every run."""
    a = torch.randn(64, 16)
    for _ in range(3):
        c = torch.zeros(64, 16)
        oversized_valid(a, c, 40)
        assert torch.equal(c[:16], a[:16] + 1) and not c[16:].any()
