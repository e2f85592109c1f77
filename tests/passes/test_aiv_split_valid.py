"""AivSplitValid: the split_aiv placement table and the one-pipe rule."""

from __future__ import annotations

import pytest
from pass_testing import line_of, parse

from plang.passes import PassError, aiv_split_valid

B = "pl.Tensor[[64, 64], pl.BF16]"
T = "pl.Tensor[[64, 64], pl.FP32]"
HEAD = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                mm = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                               pl.move(tb, target_memory=pl.MemorySpace.Right), out_dtype=pl.FP32)"""


def fails(body: str, marker: str, *fragments: str) -> None:
    src = HEAD + body
    with pytest.raises(PassError) as err:
        aiv_split_valid()(parse(src))
    for f in fragments:
        assert f in err.value.message
    assert err.value.line == line_of(src, marker)


def test_named_crossings_pass():
    prog = parse(HEAD + """
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    e = pl.exp(pl.aiv_shard(mm))
                    o = pl.store(e, [0, 0], out)
                return o
    """)
    assert aiv_split_valid()(prog) is prog


def test_unnamed_cube_to_vector_crossing():
    fails("""
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    e = pl.exp(mm)
                    o = pl.store(e, [0, 0], out)
                return o
    """, "e = pl.exp(mm)", "tile 'mm' produced by cube work", "without pl.aiv_shard")


def test_cube_op_inside_a_region():
    fails("""
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    m2 = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                                   pl.move(tb, target_memory=pl.MemorySpace.Right), out_dtype=pl.FP32)
                o = pl.store(m2, [0, 0], out)
                return o
    """, "m2 = pl.matmul", "cube op tile.matmul inside a split_aiv region")


def test_vector_op_outside_every_region_once_one_is_open():
    fails("""
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    e = pl.exp(pl.aiv_shard(mm))
                f = pl.exp(e)
                o = pl.store(f, [0, 0], out)
                return o
    """, "f = pl.exp(e)", "vector op tile.exp outside every split_aiv region")


def test_region_value_read_by_cube_without_gather():
    fails("""
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    e = pl.cast(pl.exp(pl.aiv_shard(mm)), pl.BF16)
                m2 = pl.matmul(pl.move(e, target_memory=pl.MemorySpace.Left),
                               pl.move(tb, target_memory=pl.MemorySpace.Right), out_dtype=pl.FP32)
                o = pl.store(m2, [0, 0], out)
                return o
    """, "m2 = pl.matmul", "produced in a split_aiv region is read by cube-side op tile.move",
          "without pl.aic_gather")


def test_none_and_split_crossings_cannot_share_the_pipe():
    fails("""
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    e = pl.exp(pl.aiv_shard(mm))
                    o = pl.store(e, [0, 0], out)
                for lane2 in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    h = pl.aiv_shard(mm)
                    o2 = pl.store(h, [lane2 * 32, 0], o)
                return o2
    """, "h = pl.aiv_shard(mm)", "mode=NONE split_aiv region and", "one pipe")
