"""OutlineClusterScopes: `pl.cluster()` becomes a Group function, a standalone `pl.spmd` an
Spmd function carrying core_num / sync_start."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, line_of, parse

from plang import passes
from plang.passes import PassError, outline_cluster_scopes

T = "pl.Tensor[[64, 64], pl.FP32]"
KERNEL = f"""
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0, 0])
                return o1
"""


def test_cluster_unwraps_nested_spmd_into_group_attrs():
    check_pass("outline_cluster_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.cluster():
                    with pl.spmd(4, sync_start=True):
                        o = self.k(x, out)
                return o
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Group, attrs={{"core_num": 4, "sync_start": True}})
            def main_group_0(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.k(x, out)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.main_group_0(x, out)
                return o
    """, ("ClusterOutlined", "TypeCheck"))


def test_standalone_spmd_becomes_spmd_function_with_name_hint():
    check_pass("outline_cluster_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.spmd(8, name_hint="grid"):
                    o = self.k(x, out)
                return o
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Spmd, attrs={{"core_num": 8}})
            def grid(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.k(x, out)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.grid(x, out)
                return o
    """)


def test_spmd_task_id_and_deps_become_a_submit():
    check_pass("outline_cluster_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}], out2: pl.Out[{T}]) -> {T}:
                with pl.spmd(2) as t0:
                    o = self.k(x, out)
                with pl.spmd(2, deps=[t0]):
                    o2 = self.k(o, out2)
                return o2
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Spmd, attrs={{"core_num": 2}})
            def main_spmd_0(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.k(x, out)
                return o

            @pl.function(type=pl.FunctionType.Spmd, attrs={{"core_num": 2}})
            def main_spmd_1(self, o: {T}, out2: pl.Out[{T}]) -> {T}:
                o2 = self.k(o, out2)
                return o2

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}], out2: pl.Out[{T}]) -> {T}:
                o, t0 = pl.submit(self.main_spmd_0, x, out)
                o2, tid = pl.submit(self.main_spmd_1, o, out2, deps=[t0])
                return o2
    """)


def test_cluster_inside_loop_carrying_the_output():
    check_pass("outline_cluster_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (acc,) in pl.range(2, init_values=(out,)):
                    with pl.cluster(name_hint="step"):
                        o = self.k(x, acc)
                    r = pl.yield_(o)
                return r
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Group)
            def step(self, x: {T}, acc: pl.Out[{T}]) -> {T}:
                o = self.k(x, acc)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (acc,) in pl.range(2, init_values=(out,)):
                    o = self.step(x, acc)
                    r = pl.yield_(o)
                return r
    """)


def test_spmd_nested_in_cluster_cannot_take_deps():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.spmd(2) as t0:
                    o = self.k(x, out)
                with pl.cluster():
                    with pl.spmd(2, deps=[t0]):
                        o2 = self.k(x, o)
                return o2
    """
    with pytest.raises(PassError) as err:
        outline_cluster_scopes()(parse(src))
    assert "cannot take deps" in err.value.message
    assert err.value.line == line_of(src, "with pl.spmd(2, deps=[t0])")


def test_spmd_loop_dispatching_a_kernel_becomes_an_spmd_function():
    # the block index is unused: the body dispatches `k` on 4 blocks instead of being a kernel
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i in pl.spmd(4):
                    o = self.k(x, out)
                return o
    """
    prog = parse(src)
    assert passes.outline_incore_scopes()(prog) is prog
    check_pass("outline_cluster_scopes", src, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Spmd, attrs={{"core_num": 4}})
            def main_spmd_0(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.k(x, out)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                o = self.main_spmd_0(x, out)
                return o
    """)


def test_spmd_loop_reading_its_index_cannot_call_a_kernel():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[{T}]) -> {T}:
                for i in pl.spmd(4):
                    t = pl.slice(x, [64, 64], [i * 64, 0])
                    o = self.k(t, out)
                return o
    """
    with pytest.raises(PassError) as err:
        passes.outline_incore_scopes()(parse(src))
    assert "kernel 'k' is called inside a core region" in err.value.message
    assert "cannot launch another kernel" in err.value.message
    assert err.value.line == line_of(src, "o = self.k(t, out)")
