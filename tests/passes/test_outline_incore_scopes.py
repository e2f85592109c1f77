"""OutlineIncoreScopes: core regions become InCore functions called from orchestration."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, parse

from plang.ir import assert_structural_equal
from plang.passes import PassError, PassManager, outline_incore_scopes


def test_captures_become_params_with_directions_and_name_hint():
    check_pass("outline_incore_scopes", """
        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                y = pl.add(x, x)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="expk"):
                    z = pl.exp(y)
                    out1 = pl.assemble(out, z, [0, 0])
                return out1
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def expk(self, y: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                z = pl.exp(y)
                out1 = pl.assemble(out, z, [0, 0])
                return out1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                y = pl.add(x, x)
                out1 = self.expk(y, out)
                return out1
    """, ("SplitIncoreOrch", "TypeCheck", "UseAfterDef"))


def test_scope_reading_the_tensor_it_writes_gets_inout():
    check_pass("outline_incore_scopes", """
        @pl.program
        class P:
            @pl.function
            def main(self, acc: pl.Tensor[[32, 64], pl.FP32],
                     x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    old = pl.slice(acc, [32, 64], [0, 0])
                    acc1 = pl.assemble(acc, pl.add(old, x), [0, 0])
                return acc1
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, acc: pl.InOut[pl.Tensor[[32, 64], pl.FP32]],
                              x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
                old = pl.slice(acc, [32, 64], [0, 0])
                acc1 = pl.assemble(acc, pl.add(old, x), [0, 0])
                return acc1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, acc: pl.Tensor[[32, 64], pl.FP32],
                     x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
                acc1 = self.main_incore_0(acc, x)
                return acc1
    """)


def test_scope_in_a_loop_carrying_the_output_and_a_captured_scalar():
    check_pass("outline_incore_scopes", """
        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]],
                     scale: pl.Scalar[pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
                for i, (o,) in pl.range(4, init_values=(out,)):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t = pl.slice(x, [32, 64], [i * 32, 0])
                        o2 = pl.assemble(o, pl.mul(t, scale), [i * 32, 0])
                    o3 = pl.yield_(o2)
                return o3
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, x: pl.Tensor[[128, 64], pl.FP32], i: pl.Scalar[pl.INDEX],
                              o: pl.Out[pl.Tensor[[128, 64], pl.FP32]],
                              scale: pl.Scalar[pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
                t = pl.slice(x, [32, 64], [i * 32, 0])
                o2 = pl.assemble(o, pl.mul(t, scale), [i * 32, 0])
                return o2

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]],
                     scale: pl.Scalar[pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
                for i, (o,) in pl.range(4, init_values=(out,)):
                    o2 = self.main_incore_0(x, i, o, scale)
                    o3 = pl.yield_(o2)
                return o3
    """)


def test_multiple_outputs_with_dynamic_dims_return_a_tuple():
    check_pass("outline_incore_scopes", """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    a = pl.exp(x)
                    b = pl.add(x, x)
                c = pl.add(a, b)
                return c
    """, """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, x: pl.Tensor[[M, 64], pl.FP32]) -> tuple[pl.Tensor[[M, 64], pl.FP32],
                                                                             pl.Tensor[[M, 64], pl.FP32]]:
                a = pl.exp(x)
                b = pl.add(x, x)
                return a, b

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
                ret = self.main_incore_0(x)
                a = ret[0]
                b = ret[1]
                c = pl.add(a, b)
                return c
    """)


def test_dispatch_metadata_and_task_id_move_to_the_call():
    check_pass("outline_incore_scopes", """
        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                     gate: pl.Tensor[[1, 1], pl.INT32]) -> pl.Tensor[[64, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP) as t0:
                    o1 = pl.assemble(out, pl.exp(x), [0, 0])
                with pl.at(level=pl.Level.CORE_GROUP, deps=[t0], no_dep_args=[x]):
                    o2 = pl.assemble(o1, pl.add(x, x), [0, 0])
                return o2
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                              x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                o1 = pl.assemble(out, pl.exp(x), [0, 0])
                return o1

            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_1(self, o1: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                              x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                o2 = pl.assemble(o1, pl.add(x, x), [0, 0])
                return o2

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                     gate: pl.Tensor[[1, 1], pl.INT32]) -> pl.Tensor[[64, 64], pl.FP32]:
                o1, t0 = pl.submit(self.main_incore_0, out, x)
                o2, tid = pl.submit(self.main_incore_1, o1, pl.no_dep(x), deps=[t0])
                return o2
    """)


def test_spmd_loop_body_binds_the_block_index_and_nested_at_is_spliced():
    check_pass("outline_incore_scopes", """
        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[128, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                for i in pl.spmd(4):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t = pl.slice(x, [32, 64], [i * 32, 0])
                        o = pl.assemble(out, pl.exp(t), [i * 32, 0])
                return o
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, x: pl.Tensor[[128, 64], pl.FP32],
                              out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                i = pl.tile.get_block_idx()
                t = pl.slice(x, [32, 64], [i * 32, 0])
                o = pl.assemble(out, pl.exp(t), [i * 32, 0])
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[128, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                with pl.spmd(4):
                    o = self.main_incore_0(x, out)
                return o
    """)


def test_top_level_split_aiv_region_is_outlined_and_checked():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    mm = pl.matmul(a, b)
                    for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                        e = pl.exp(mm)
                        o = pl.assemble(out, e, [0, 0])
                return o
    """)
    with pytest.raises(PassError) as err:
        outline_incore_scopes()(prog)
    assert "without pl.aiv_shard" in err.value.message and "'mm'" in err.value.message
    assert err.value.line == 12  # the `e = pl.exp(mm)` line


def _outline_after_rebinding(src: str):
    return PassManager(["RebindWrittenOperands", "ConvertToSSA", "OutlineIncoreScopes",
                        "InOutUseValid", "UseAfterDef"]).run(parse(src))


def test_bare_stores_in_a_scope_become_its_results_and_rebind_the_caller():
    T = "pl.Tensor[[128, 64], pl.FP32]"
    out = _outline_after_rebinding(f"""
        @pl.program
        class P:
            @pl.function
            def main(self, a: {T}, c: pl.Out[{T}], d: pl.Out[{T}]) -> tuple[{T}, {T}]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(a, [0, 0], [128, 64])
                    pl.store(pl.exp(t), [0, 0], c)
                    pl.store(t, [0, 0], d)
                return c, d
    """)
    expected = parse(f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, a: {T}, c: pl.Out[{T}], d: pl.Out[{T}]) -> tuple[{T}, {T}]:
                t = pl.load(a, [0, 0], [128, 64])
                c_1 = pl.store(pl.exp(t), [0, 0], c)
                d_1 = pl.store(t, [0, 0], d)
                return c_1, d_1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T}, c: pl.Out[{T}], d: pl.Out[{T}]) -> tuple[{T}, {T}]:
                ret = self.main_incore_0(a, c, d)
                c_1 = ret[0]
                d_1 = ret[1]
                return c_1, d_1
    """)
    assert_structural_equal(out, expected)


def test_a_bare_store_in_a_scope_inside_a_loop_is_carried_by_the_loop():
    T = "pl.Tensor[[128, 64], pl.FP32]"
    out = _outline_after_rebinding(f"""
        @pl.program
        class P:
            @pl.function
            def main(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                for i in pl.range(4):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t = pl.load(a, [i * 32, 0], [32, 64])
                        pl.store(pl.exp(t), [i * 32, 0], c)
                return c
    """)
    expected = parse(f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main_incore_0(self, a: {T}, i: pl.Scalar[pl.INDEX], c: pl.Out[{T}]) -> {T}:
                t = pl.load(a, [i * 32, 0], [32, 64])
                c_1 = pl.store(pl.exp(t), [i * 32, 0], c)
                return c_1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: {T}, c: pl.Out[{T}]) -> {T}:
                for i, (c_1,) in pl.range(4, init_values=(c,)):
                    c_2 = self.main_incore_0(a, i, c_1)
                    c_3 = pl.yield_(c_2)
                return c_3
    """)
    assert_structural_equal(out, expected)
