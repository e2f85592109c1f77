"""View and placement ops in a kernel: `tile.extract`, `tile.transpose_view`,
`tile.set_validshape`, `tile.reinterpret_view` and `tile.fillpad_expand` compute what torch
computes; `tile.alloc`, `pl.reserve_buffer`,
`pl.import_peer_buffer` and the pipe set-up ops run as no-ops on the CPU."""

from __future__ import annotations

import textwrap

import torch

import plang as pl
from plang.codegen.kernel import compile_kernel
from plang.debug import run_torch_ref


def _kernel(body: str, x_shape: str, out_shape: str):
    src = textwrap.dedent(f"""
        import plang as pl

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[{x_shape}, pl.FP32], out: pl.Out[pl.Tensor[{out_shape}, pl.FP32]]):
        """) + textwrap.indent(textwrap.dedent(body), "    ")
    return pl.parse(src)


def _run(fn, x: torch.Tensor, out_shape) -> tuple[torch.Tensor, torch.Tensor]:
    got, want = torch.zeros(out_shape), torch.zeros(out_shape)
    compile_kernel(fn)(x.clone(), got)
    run_torch_ref(fn, x.clone(), want)
    return got, want


def test_extract_copies_the_window():
    fn = _kernel("""
        t = pl.load(x, [0, 0], [16, 32])
        e = pl.tile.extract(t, 4, 8, [8, 16], target_memory=pl.Mem.Vec)
        pl.store(e, [0, 0], out)
        """, "[16, 32]", "[8, 16]")
    x = torch.randn(16, 32)
    got, want = _run(fn, x, (8, 16))
    torch.testing.assert_close(got, x[4:12, 8:24])
    torch.testing.assert_close(want, x[4:12, 8:24])


def test_transpose_view_swaps_the_trailing_axes():
    fn = _kernel("""
        t = pl.load(x, [0, 0], [16, 32])
        v = pl.tile.transpose_view(t)
        pl.store(v, [0, 0], out)
        """, "[16, 32]", "[32, 16]")
    x = torch.randn(16, 32)
    got, want = _run(fn, x, (32, 16))
    torch.testing.assert_close(got, x.T)
    torch.testing.assert_close(want, x.T)


def test_set_validshape_keeps_the_data_and_narrows_the_store():
    fn = _kernel("""
        t = pl.load(x, [0, 0], [8, 16])
        v = pl.tile.set_validshape(t, 5, 12)
        pl.store(v, [0, 0], out)
        """, "[8, 16]", "[8, 16]")
    x = torch.randn(8, 16)
    got, _ = _run(fn, x, (8, 16))
    torch.testing.assert_close(got[:5, :12], x[:5, :12])
    assert not got[5:].any() and not got[:, 12:].any()


def test_placement_ops_are_no_ops_on_the_cpu():
    fn = _kernel("""
        buf: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 2048)
        base = pl.reserve_buffer(name="c2v", size=4096, base=256)
        peer = pl.import_peer_buffer(name="v2c", peer_func="cube")
        pl.aiv_initialize_pipe(base, peer, dir_mask=3, slot_size=512)
        t: pl.Tile[[8, 16], pl.FP32, pl.MemRef(buf, 0, 512), pl.Mem.Vec] = pl.load(x, [0, 0], [8, 16])
        pl.store(pl.mul(t, 2.0), [0, 0], out)
        """, "[8, 16]", "[8, 16]")
    x = torch.randn(8, 16)
    got, want = _run(fn, x, (8, 16))
    torch.testing.assert_close(got, 2 * x)
    torch.testing.assert_close(want, 2 * x)


def test_reinterpret_view_reads_the_same_bytes():
    fn = _kernel("""
        t = pl.load(x, [0, 0], [4, 8])
        r = pl.tile.reinterpret_view(t, pl.INT16)
        s = pl.tile.adds(r, 1)
        f = pl.tile.reinterpret_view(s, pl.FP32)
        pl.store(f, [0, 0], out)
        """, "[4, 8]", "[4, 8]")
    x = torch.randn(4, 8)
    want = (x.view(torch.int16) + 1).view(torch.float32)  # a width change: 8 FP32 -> 16 INT16
    got, ref = _run(fn, x, (4, 8))
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    assert torch.equal(ref.view(torch.int32), want.view(torch.int32))


def test_fillpad_expand_pads_around_the_valid_region():
    fn = _kernel("""
        t = pl.load(x, [0, 0], [6, 20], valid_shape=[5, 13])
        e = pl.tile.fillpad_expand(t, [8, 40], pad_value=pl.PadValue.min)
        pl.store(e, [0, 0], out)
        """, "[6, 20]", "[8, 40]")
    x = torch.randn(6, 20)
    want = torch.full((8, 40), -torch.inf)
    want[:5, :13] = x[:5, :13]
    got, ref = _run(fn, x, (8, 40))
    assert torch.equal(got, want) and torch.equal(ref, want)
