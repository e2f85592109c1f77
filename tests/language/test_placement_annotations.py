"""Placement metadata in annotations (`pl.MemRef`, `pl.TensorView`, `pl.TileView(...)`), tiles
typed by their annotation (`pl.tpop_from_aic()`), program methods without `self` and call-site
`attrs=` / `pl.adir` directions: each is kept in the IR, printed and round-tripped."""

from __future__ import annotations

import textwrap

import pytest

import plang as pl
from plang.ir import PtrType, TileType, structural_equal
from plang.ir.enums import ArgDirection

from ._round_trip import round_trip


def test_memrefs_and_views_are_kept_printed_and_round_tripped():
    prog, text = round_trip("""
        import plang as pl

        @pl.program
        class P:
            @pl.function
            def main(self,
                     a: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_0", 0, 16384)],
                     s: pl.Tensor[[32, 64], pl.FP32,
                                  pl.TensorView(stride=[128, 1], layout=pl.TensorLayout.ND)],
                     o: pl.Out[pl.Tensor[[64, 64], pl.FP32, pl.NZ, pl.MemRef("mem_ddr_1", 0, 16384)]],
                     ) -> pl.Tensor[[64, 64], pl.FP32]:
                buf: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 32768)
                t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(buf, 0, 16384), pl.Mem.Vec] = pl.tile.load(
                    a, [0, 0], [64, 64])
                u: pl.Tile[[64, 64], pl.FP32, pl.MemRef("ping", slots=2)[1], pl.Mem.Vec,
                           pl.TileView(valid_shape=[32, 64], blayout=pl.TileLayout.row_major, fractal=512,
                                       pad=pl.PadValue.zero)] = pl.tile.add(t, t)
                o = pl.tile.store(u, [0, 0], o)
                return o
        """)
    fn = prog.functions["main"]
    a, s, o = fn.params
    m = a.type.memref
    assert (m.base, m.byte_offset.value, m.size) == ("mem_ddr_0", 0, 16384)
    assert [d.value for d in s.type.view.stride] == [128, 1]
    assert o.type.layout is pl.NZ and o.type.memref.base == "mem_ddr_1"
    buf, t, u = (st.var for st in fn.body.stmts[:3])
    assert isinstance(buf.type, PtrType) and t.type.memref.base is buf
    assert u.type.memref.slots == 2 and u.type.memref.slot.value == 1
    assert u.type.view.fractal == 512 and u.type.view.pad is pl.PadValue.zero
    assert [d.value for d in u.type.valid_shape] == [32, 64]
    assert 'pl.MemRef("ping", slots=2)[1]' in text


def test_default_views_print_as_nothing():
    prog, text = round_trip("""
        import plang as pl

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[8, 8], pl.FP32, pl.TensorView(stride=[], layout=pl.TensorLayout.DN)]):
            t: pl.Tile[[8, 8], pl.FP32, pl.Mem.Vec, pl.TileView()] = pl.load(x, [0, 0], [8, 8])
        """)
    assert prog.params[0].type.view is None and prog.params[0].type.layout is pl.DN
    assert "TileView" not in text and "pl.Tensor[[8, 8], pl.FP32, pl.DN]" in text


def test_transpose_view_flips_the_layouts():
    prog, _ = round_trip("""
        import plang as pl

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[1, 64, 128], pl.BF16]):
            m = pl.load(x, [0, 0, 0], [1, 64, 128], target_memory=pl.Mem.Mat)
            v: pl.Tile[[1, 128, 64], pl.BF16, pl.Mem.Mat,
                       pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)] = (
                pl.tile.transpose_view(m))
        """)
    v = prog.body.stmts[1].value.type
    assert (v.view.blayout, v.view.slayout) == (pl.TileLayout.row_major, pl.TileLayout.col_major)


def test_pipe_pop_takes_its_type_from_the_annotation():
    prog, text = round_trip("""
        import plang as pl

        @pl.function(type=pl.FunctionType.AIV)
        def k():
            base = pl.reserve_buffer(name="c2v", size=4096)
            pl.aiv_initialize_pipe(base, 0, dir_mask=1, slot_size=4096)
            t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=0)
            pl.tfree_to_aic(t)
        """)
    call = prog.body.stmts[2].value
    assert structural_equal(call.type, TileType([16, 64], pl.FP32, pl.Mem.Vec))
    assert "pl.tile.tpop_from_aic()" in text


def test_extract_checks_its_window():
    with pytest.raises(pl.ParserTypeError, match="extract window .* exceeds src extent 32"):
        pl.parse(textwrap.dedent("""
            import plang as pl

            @pl.function(type=pl.FunctionType.InCore)
            def k(x: pl.Tensor[[16, 32], pl.FP32]):
                t = pl.load(x, [0, 0], [16, 32])
                e = pl.tile.extract(t, 0, 24, [8, 16], target_memory=pl.Mem.Vec)
            """))


def test_methods_without_self_and_call_attrs_round_trip():
    prog, text = round_trip("""
        import plang as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(x: pl.Tensor[[64], pl.FP32],
                       out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
                t = pl.load(x, [0], [64])
                out = pl.store(t, [0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                out = pl.create_tensor([64], dtype=pl.FP32)
                out = self.kernel(x, out, attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]})
                return out
        """)
    call = prog.functions["main"].body.stmts[1].value
    assert call.kwargs["attrs"]["arg_directions"] == (ArgDirection.Input, ArgDirection.OutputExisting)
    assert 'attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]}' in text \
        or "attrs={'arg_directions': [pl.adir.input, pl.adir.output_existing]}" in text


def test_an_unnamed_memref_takes_its_variable_name():
    prog, text = round_trip("""
        import plang as pl

        ping = pl.MemRef(slots=2)

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[8, 8], pl.FP32]):
            scratch = pl.MemRef()
            t: pl.Tile[[8, 8], pl.FP32, ping[0], pl.Mem.Vec] = pl.load(x, [0, 0], [8, 8])
            u: pl.Tile[[8, 8], pl.FP32, scratch, pl.Mem.Vec] = pl.exp(t)
        """)
    t, u = (st.var.type.memref for st in prog.body.stmts[-2:])
    assert (t.base, t.slots, t.slot.value) == ("ping", 2, 0) and u.base == "scratch"
    assert 'pl.MemRef("ping", slots=2)[0]' in text and 'pl.MemRef("scratch")' in text
