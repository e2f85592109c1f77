"""ConvertTensorToTileOps: tensor ops in InCore kernels become tile load / compute / store."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, line_of, parse

from plang.passes import PassError, convert_tensor_to_tile_ops

T = "pl.Tensor[[64, 64], pl.FP32]"
TILE = "pl.Tile[[64, 64], pl.FP32]"


def test_elementwise_chain_loads_params_once_and_stores_into_out():
    check_pass("convert_tensor_to_tile_ops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, y: {T}, out: pl.Out[{T}]) -> {T}:
                a = pl.add(x, y)
                b = pl.exp(a)
                m = pl.mul(b, x)
                o = pl.assemble(out, m, [0, 0])
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, y: {T}, out: pl.Out[{T}]) -> {T}:
                xt = pl.tile.load(x, [0, 0], [64, 64])
                yt = pl.tile.load(y, [0, 0], [64, 64])
                a = pl.tile.add(xt, yt)
                b = pl.tile.exp(a)
                m = pl.tile.mul(b, xt)
                o = pl.tile.store(m, [0, 0], out)
                return o
    """, ("IncoreTileOps", "TypeCheck", "UseAfterDef", "SSAForm"))


def test_slices_become_loads_inside_a_loop_with_carried_output():
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[128, 64], pl.FP32],
                  out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                for i, (o,) in pl.range(4, init_values=(out,)):
                    off = i * 32
                    t = pl.slice(x, [32, 64], [off, 0])
                    v = pl.relu(t)
                    o2 = pl.assemble(o, v, [off, 0])
                    r = pl.yield_(o2)
                return r
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[128, 64], pl.FP32],
                  out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                for i, (o,) in pl.range(4, init_values=(out,)):
                    off = i * 32
                    t = pl.tile.load(x, [off, 0], [32, 64])
                    v = pl.tile.relu(t)
                    o2 = pl.tile.store(v, [off, 0], o)
                    r = pl.yield_(o2)
                return r
    """)


def test_reduction_and_carried_accumulator_become_tiles():
    check_pass("convert_tensor_to_tile_ops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, bias: pl.Tensor[[64, 1], pl.FP32],
                  out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
                z = pl.slice(bias, [64, 1], [0, 0])
                for i, (acc,) in pl.range(2, init_values=(z,)):
                    s = pl.row_sum(x)
                    acc2 = pl.add(acc, s)
                    r = pl.yield_(acc2)
                o = pl.assemble(out, r, [0, 0])
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, bias: pl.Tensor[[64, 1], pl.FP32],
                  out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
                xt = pl.tile.load(x, [0, 0], [64, 64])
                z = pl.tile.load(bias, [0, 0], [64, 1])
                for i, (acc,) in pl.range(2, init_values=(z,)):
                    s = pl.tile.row_sum(xt)
                    acc2 = pl.tile.add(acc, s)
                    r = pl.yield_(acc2)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """)


def test_returned_intermediates_become_out_params_allocated_by_callers():
    check_pass("convert_tensor_to_tile_ops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}) -> tuple[{T}, {T}]:
                a = pl.exp(x)
                b = pl.neg(x)
                return a, b

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}) -> {T}:
                ret = self.k(x)
                a = ret[0]
                return a
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, ret0: pl.Out[{T}], ret1: pl.Out[{T}]) -> tuple[{T}, {T}]:
                xt = pl.tile.load(x, [0, 0], [64, 64])
                a = pl.tile.exp(xt)
                b = pl.tile.neg(xt)
                s0 = pl.tile.store(a, [0, 0], ret0)
                s1 = pl.tile.store(b, [0, 0], ret1)
                return s0, s1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}) -> {T}:
                r0 = pl.tensor.create([64, 64], dtype=pl.FP32)
                r1 = pl.tensor.create([64, 64], dtype=pl.FP32)
                ret = self.k(x, r0, r1)
                a = ret[0]
                return a
    """)


def test_dynamic_dims_and_matmul_operands():
    check_pass("convert_tensor_to_tile_ops", """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[N, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
                  out: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
                  r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[N, 64], pl.FP32]:
                at = pl.slice(a, [32, 64], [r, 0])
                c = pl.matmul(at, w, out_dtype=pl.FP32)
                o = pl.assemble(out, c, [r, 0])
                return o
    """, """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[N, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
                  out: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
                  r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[N, 64], pl.FP32]:
                wt = pl.tile.load(w, [0, 0], [64, 64])
                at = pl.tile.load(a, [r, 0], [32, 64])
                c = pl.tile.matmul(at, wt, out_dtype=pl.FP32)
                o = pl.tile.store(c, [r, 0], out)
                return o
    """)


def test_tile_over_capacity_names_value_size_and_capacity():
    src = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[512, 512], pl.FP32],
                  out: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
                y = pl.transpose(x, 0, 1)
                o = pl.assemble(out, y, [0, 0])
                return o
    """
    with pytest.raises(PassError) as err:
        convert_tensor_to_tile_ops()(parse(src))
    msg = err.value.message
    assert "'x'" in msg and "1048576 bytes" in msg and "Vec buffer's 196608 bytes" in msg
    assert err.value.line == line_of(src, "y = pl.transpose(x, 0, 1)")
