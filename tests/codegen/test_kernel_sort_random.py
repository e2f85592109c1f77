"""`sort32` / `mrgsort`, `random` and the `pl.prefetch` family end to end on the chip and
through the torch reference, against torch written here (a stable descending sort, the
Philox4x32-10 known-answer vector of Random123, an unchanged copy)."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref

SORT = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[2, 512], pl.FP32], idx: pl.Tensor[[2, 512], pl.UINT32],
          vals: pl.Out[pl.Tensor[[2, 512], pl.FP32]], ids: pl.Out[pl.Tensor[[2, 512], pl.UINT32]],
          runs: pl.Out[pl.Tensor[[2, 1024], pl.FP32]]):
        s: pl.Tile[[2, 512], pl.FP32] = pl.load(src, [0, 0], [2, 512])
        i: pl.Tile[[2, 512], pl.UINT32] = pl.load(idx, [0, 0], [2, 512])
        st: pl.Tile[[2, 1024], pl.FP32] = pl.tile.sort32(s, i)
        runs = pl.store(st, [0, 0], runs)
        for it, (acc,) in pl.range(2, init_values=(st,)):
            merged: pl.Tile[[2, 1024], pl.FP32] = pl.tile.mrgsort(acc, block_len=64 << (it * 2))
            res = pl.yield_(merged)
        v: pl.Tile[[2, 512], pl.FP32] = pl.tile.gather_mask(res, mask_pattern=pl.tile.MaskPattern.P0101)
        d: pl.Tile[[2, 512], pl.UINT32] = pl.tile.gather_mask(res, mask_pattern=pl.tile.MaskPattern.P1010,
                                                              output_dtype=pl.UINT32)
        vals = pl.store(v, [0, 0], vals)
        ids = pl.store(d, [0, 0], ids)
        return vals, ids, runs

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[2, 512], pl.FP32], idx: pl.Tensor[[2, 512], pl.UINT32],
             vals: pl.Out[pl.Tensor[[2, 512], pl.FP32]], ids: pl.Out[pl.Tensor[[2, 512], pl.UINT32]],
             runs: pl.Out[pl.Tensor[[2, 1024], pl.FP32]]):
        vals, ids, runs = self.k(src, idx, vals, ids, runs)
        return vals, ids, runs
"""

MERGE = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[1, 64], pl.FP32], ai: pl.Tensor[[1, 64], pl.UINT32],
             b: pl.Tensor[[1, 32], pl.FP32], bi: pl.Tensor[[1, 32], pl.UINT32],
             c: pl.Tensor[[1, 32], pl.FP32], ci: pl.Tensor[[1, 32], pl.UINT32],
             out: pl.Out[pl.Tensor[[1, 256], pl.FP32]]) -> pl.Tensor[[1, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            sa = pl.mrgsort(pl.sort32(a, ai), block_len=64)
            m = pl.tensor.mrgsort(sa, pl.tensor.sort32(b, bi), pl.tensor.sort32(c, ci))
            out = pl.assemble(out, m, [0, 0])
        return out
"""


def _uint32(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.int64).to(torch.uint32)


def _chip_and_ref(src: str, inputs: list, outs: list) -> list:
    prog = pl.parse(src)
    chip = [o.clone() for o in outs]
    pl.compile(prog)(*inputs, *chip)
    ref = run_torch_ref(prog, *inputs, *[o.clone() for o in outs])
    for c, r in zip(chip, ref if isinstance(ref, tuple) else [ref]):
        assert torch.equal(c.view(torch.int32) if c.dtype == torch.float32 else c.to(torch.int64),
                           r.view(torch.int32) if r.dtype == torch.float32 else r.to(torch.int64))
    return chip


def test_sort32_then_mrgsort_sorts_each_row_descending_with_its_indices():
    src = torch.randn(2, 512)
    src[0, 100] = src[0, 7]  # a tie keeps the earlier element first
    idx = _uint32(torch.arange(512).repeat(2, 1) + 1000)
    outs = [torch.zeros(2, 512), _uint32(torch.zeros(2, 512)), torch.zeros(2, 1024)]
    vals, ids, runs = _chip_and_ref(SORT, [src, idx], outs)
    order = torch.sort(src, dim=-1, descending=True, stable=True).indices
    assert torch.equal(vals, torch.gather(src, 1, order))
    assert torch.equal(ids.to(torch.int64), order + 1000)
    run_order = torch.sort(src[0, :32], descending=True, stable=True).indices
    assert torch.equal(runs[0, 0:64:2], src[0, run_order])
    assert torch.equal(runs[0, 1:64:2].view(torch.int32).long(), run_order + 1000)


def test_mrgsort_merges_three_values():
    a, b, c = torch.randn(1, 64), torch.randn(1, 32), torch.randn(1, 32)
    ids = [_uint32(torch.arange(n)[None] + o) for n, o in ((64, 0), (32, 64), (32, 96))]
    out, = _chip_and_ref(MERGE, [a, ids[0], b, ids[1], c, ids[2]], [torch.zeros(1, 256)])
    both = torch.cat([a, b, c], 1)
    order = torch.sort(both, dim=-1, descending=True, stable=True).indices
    assert torch.equal(out[:, 0::2], torch.gather(both, 1, order))
    assert torch.equal(out[:, 1::2].view(torch.int32).long(), order)


RANDOM = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, seed: pl.Scalar[pl.INT32], u: pl.Out[pl.Tensor[[4, 40], pl.UINT32]],
          s: pl.Out[pl.Tensor[[16, 64], pl.INT32]]):
        a: pl.Tile[[4, 40], pl.UINT32] = pl.tile.random(seed, 0, 0, 0, 0, 0, [4, 40])
        b: pl.Tile[[16, 64], pl.INT32] = pl.tile.random(7, 9, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, [16, 64],
                                                        dtype=pl.INT32, rounds=7)
        u = pl.store(a, [0, 0], u)
        s = pl.store(b, [0, 0], s)
        return u, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, seed: pl.Scalar[pl.INT32], u: pl.Out[pl.Tensor[[4, 40], pl.UINT32]],
             s: pl.Out[pl.Tensor[[16, 64], pl.INT32]]):
        u, s = self.k(seed, u, s)
        return u, s
"""


def test_random_is_philox4x32_of_the_counter_and_position():
    prog = pl.parse(RANDOM)
    outs = [_uint32(torch.zeros(4, 40)), torch.zeros(16, 64, dtype=torch.int32)]
    pl.compile(prog)(0, *outs)
    u, s = outs
    # Random123's known answer for Philox4x32-10, key 0, counter 0 (the first four elements)
    assert [int(v) for v in u[0, :4].to(torch.int64)] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    ru, rs = run_torch_ref(prog, 0, _uint32(torch.zeros(4, 40)), torch.zeros(16, 64, dtype=torch.int32))
    assert torch.equal(u.to(torch.int64), ru.to(torch.int64)) and torch.equal(s, rs)
    assert len(set(s.flatten().tolist())) > 1000  # the carry into counter2 keeps positions distinct
    again = [_uint32(torch.zeros(4, 40)), torch.zeros(16, 64, dtype=torch.int32)]
    pl.compile(prog)(1, *again)
    assert not torch.equal(again[0].to(torch.int64), u.to(torch.int64)) and torch.equal(again[1], s)


PREFETCH = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[1, 96], pl.FP32], out: pl.Out[pl.Tensor[[1, 96], pl.FP32]]
          ) -> pl.Tensor[[1, 96], pl.FP32]:
        ctx: pl.PrefetchAsyncContext = pl.prefetch.make_context()
        evt: pl.AsyncEvent = pl.prefetch.async_prefetch(a, ctx)
        done = pl.prefetch.wait(evt, pl.prefetch.session(ctx))
        t: pl.Tile[[1, 96], pl.FP32] = pl.load(a, [0, 0], [1, 96])
        if done:
            t = pl.tile.muls(t, 2.0)
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[1, 96], pl.FP32], out: pl.Out[pl.Tensor[[1, 96], pl.FP32]]
             ) -> pl.Tensor[[1, 96], pl.FP32]:
        out = self.k(a, out)
        return out
"""


def test_prefetch_changes_no_value_and_its_wait_returns_true():
    prog = pl.parse(PREFETCH)
    a, out = torch.randn(1, 96), torch.zeros(1, 96)
    pl.compile(prog)(a, out)
    assert torch.equal(out, a * 2)
    assert torch.equal(run_torch_ref(prog, a, torch.zeros(1, 96)), a * 2)
    text = prog.as_python()
    assert "pl.prefetch.wait(evt, pl.prefetch.session(ctx))" in text
    assert "ctx: pl.PrefetchAsyncContext = pl.prefetch.make_context()" in text
    assert "evt: pl.AsyncEvent = pl.prefetch.async_prefetch(a, ctx)" in text
    pl.ir.assert_structural_equal(prog, pl.parse(text))  # the handle types print and parse back


def test_each_prefetch_handle_comes_from_its_own_op():
    swapped = PREFETCH.replace("wait(evt, pl.prefetch.session(ctx))", "wait(evt, ctx)")
    with pytest.raises(pl.Error, match=r"expects session to be a pl\.AsyncSession \(the result of "
                                       r"prefetch\.session\), got PrefetchAsyncContext"):
        pl.parse(swapped)
    with pytest.raises(pl.Error, match="'evt' is annotated AsyncSession but the value has type AsyncEvent"):
        pl.parse(PREFETCH.replace("evt: pl.AsyncEvent", "evt: pl.AsyncSession"))


def test_prefetch_wants_a_flat_gm_region():
    with pytest.raises(pl.Error, match="src must be a flat 1D region"):
        pl.parse(PREFETCH.replace("[1, 96]", "[2, 48]"))
