"""ConvertTensorToTileOps row blocking: tensor code whose tiles would not fit on chip becomes a
loop over row blocks; the kernel's new outputs are the caller's own `Out` tensors when it
returns them. The blocked programs also run end to end against torch."""

from __future__ import annotations

import pytest
import torch
from pass_testing import check_pass, line_of, parse

import plang as pl
from plang.passes import PassError, convert_tensor_to_tile_ops
from plang.passes.analysis.var_uses import calls_in

BIG = "pl.Tensor[[1024, 256], pl.FP32]"  # 1 MiB: more than the 192 KiB Vec buffer
VERIFY = ("IncoreTileOps", "TypeCheck", "UseAfterDef", "SSAForm")


def test_elementwise_becomes_a_row_loop_writing_a_new_output():
    # x and y blocks: 2 KiB per row -> 96 rows fit; 64 is the largest divisor of 1024 below
    check_pass("convert_tensor_to_tile_ops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}) -> {BIG}:
                y = pl.add(x, x)
                return y
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}, ret0: pl.Out[{BIG}]) -> {BIG}:
                for rb, (o,) in pl.range(16, init_values=(ret0,)):
                    row = rb * 64
                    xr = pl.tile.load(x, [row, 0], [64, 256])
                    y = pl.tile.add(xr, xr)
                    s = pl.tile.store(y, [row, 0], o)
                    r = pl.yield_(s)
                return r
    """, VERIFY)


def test_row_reductions_broadcasts_and_assemble_chain_share_one_loop():
    # per row: x, xb, m, d, e, s, y blocks -> 5 KiB + 8 B of the 191 KiB b leaves: 38 rows
    check_pass("convert_tensor_to_tile_ops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}, b: pl.Tensor[[1, 256], pl.FP32], t: pl.Scalar[pl.FP32],
                  out: pl.Out[pl.Tensor[[2048, 256], pl.FP32]]) -> pl.Tensor[[2048, 256], pl.FP32]:
                xb = pl.col_expand_add(x, b)
                m = pl.row_max(xb)
                d = pl.row_expand_sub(xb, m)
                e = pl.exp(d)
                s = pl.row_sum(e)
                y = pl.tensor.muls(e, t)
                o1 = pl.assemble(out, y, [0, 0])
                o2 = pl.assemble(o1, s, [1024, 0])
                return o2
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}, b: pl.Tensor[[1, 256], pl.FP32], t: pl.Scalar[pl.FP32],
                  out: pl.Out[pl.Tensor[[2048, 256], pl.FP32]]) -> pl.Tensor[[2048, 256], pl.FP32]:
                bt = pl.tile.load(b, [0, 0], [1, 256])
                for rb, (o,) in pl.range(32, init_values=(out,)):
                    row = rb * 32
                    xr = pl.tile.load(x, [row, 0], [32, 256])
                    xb = pl.tile.col_expand_add(xr, bt)
                    m = pl.tile.row_max(xb)
                    d = pl.tile.row_expand_sub(xb, m)
                    e = pl.tile.exp(d)
                    s = pl.tile.row_sum(e)
                    y = pl.tile.muls(e, t)
                    o1 = pl.tile.store(y, [row, 0], o)
                    o2 = pl.tile.store(s, [1024 + row, 0], o1)
                    r = pl.yield_(o2)
                return r
    """, VERIFY)


def test_matmul_blocks_the_left_operand_and_keeps_the_right_one_whole():
    # a rows: 1 KiB of Left's 64 KiB; c rows: 256 B of Acc's 128 KiB; wf whole in Right
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[1024, 256], pl.FP32],
                  w: pl.Tensor[[256, 64], pl.BF16]) -> pl.Tensor[[1024, 64], pl.FP32]:
                wf = pl.cast(w, pl.FP32)
                c = pl.matmul(a, wf)
                return c
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[1024, 256], pl.FP32], w: pl.Tensor[[256, 64], pl.BF16],
                  ret0: pl.Out[pl.Tensor[[1024, 64], pl.FP32]]) -> pl.Tensor[[1024, 64], pl.FP32]:
                wt = pl.tile.load(w, [0, 0], [256, 64])
                wf = pl.tile.cast(wt, pl.FP32)
                for rb, (o,) in pl.range(16, init_values=(ret0,)):
                    row = rb * 64
                    ar = pl.tile.load(a, [row, 0], [64, 256])
                    c = pl.tile.matmul(ar, wf)
                    s = pl.tile.store(c, [row, 0], o)
                    r = pl.yield_(s)
                return r
    """, VERIFY)


@pytest.mark.parametrize("body, culprit", [
    ("y = pl.col_sum(x)", "x"),                                  # not row-wise
    ("y = pl.add(x, x)\n                z = pl.tensor.read(y, [0, 0])", "x"),  # a row block read as a scalar
])
def test_non_row_wise_bodies_keep_the_capacity_error(body, culprit):
    src = f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}) -> {BIG}:
                {body}
                return x
    """
    with pytest.raises(PassError) as err:
        convert_tensor_to_tile_ops()(parse(src))
    msg = err.value.message
    assert f"{culprit!r}" in msg and "1048576 bytes" in msg and "Vec buffer's 196608 bytes" in msg
    assert err.value.line == line_of(src, body.splitlines()[0])


def test_a_single_row_larger_than_the_buffer_is_still_an_error():
    src = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[4, 65536], pl.FP32]) -> pl.Tensor[[4, 65536], pl.FP32]:
                y = pl.exp(x)
                return y
    """
    with pytest.raises(PassError, match=r"'x' .* 1048576 bytes, more than the Vec buffer's 196608"):
        convert_tensor_to_tile_ops()(parse(src))


KERNEL = f"""
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}) -> tuple[{BIG}, {BIG}]:
                a = pl.exp(x)
                b = pl.neg(x)
                return a, b
"""


def test_kernel_outputs_are_the_callers_unused_out_tensors_it_returns():
    check_pass("convert_tensor_to_tile_ops", f"""
        @pl.program
        class P:
            {KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {BIG}, a: pl.Out[{BIG}], b: pl.Out[{BIG}]) -> tuple[{BIG}, {BIG}]:
                ret = self.k(x)
                a_1 = ret[0]
                b_1 = ret[1]
                return b_1, a_1
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}, ret0: pl.Out[{BIG}], ret1: pl.Out[{BIG}]) -> tuple[{BIG}, {BIG}]:
                for rb, (o0, o1) in pl.range(16, init_values=(ret0, ret1)):
                    row = rb * 64
                    xr = pl.tile.load(x, [row, 0], [64, 256])
                    a = pl.tile.exp(xr)
                    b = pl.tile.neg(xr)
                    s0 = pl.tile.store(a, [row, 0], o0)
                    s1 = pl.tile.store(b, [row, 0], o1)
                    r0, r1 = pl.yield_(s0, s1)
                return r0, r1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {BIG}, a: pl.Out[{BIG}], b: pl.Out[{BIG}]) -> tuple[{BIG}, {BIG}]:
                ret = self.k(x, a, b)
                a_1 = ret[0]
                b_1 = ret[1]
                return b_1, a_1
    """)


def test_an_out_tensor_the_caller_also_uses_gets_a_fresh_buffer():
    out = check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                a = pl.exp(x)
                return a

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[64, 64], pl.FP32], a: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                     c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                     ) -> tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:
                c_1 = self.k(a)
                a_1 = self.k(x)
                return a_1, c_1
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.FP32],
                  ret0: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                xt = pl.tile.load(x, [0, 0], [64, 64])
                a = pl.tile.exp(xt)
                s = pl.tile.store(a, [0, 0], ret0)
                return s

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[64, 64], pl.FP32], a: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                     c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                     ) -> tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:
                c_1 = self.k(a, c)
                r = pl.tensor.create([64, 64], dtype=pl.FP32)
                a_1 = self.k(x, r)
                return a_1, c_1
    """)
    assert out.functions["main"].params[1].name == "a"


# ------------------------------------------------------------------ end to end
@pl.jit
def double_in_scope(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.add(x, x)
    return y


def test_oversized_scope_runs_end_to_end_and_writes_the_out_tensor_in_place():
    x = torch.randn(4096, 1024)
    y = torch.zeros(4096, 1024)
    double_in_scope(x, y)
    torch.testing.assert_close(y, x + x)
    lowered = double_in_scope.lower(x, y)
    kernel = lowered.functions["double_in_scope_incore_0"]
    assert [p.name for p in kernel.params] == ["x", "ret0"]
    entry = lowered.functions["double_in_scope"]
    [call] = [c for c in calls_in(entry.body) if c.op.name == kernel.name]
    assert call.args[1] is entry.params[1]  # the kernel writes y itself: nothing to copy back
    assert not any(c.op.name == "tensor.create" for c in calls_in(entry.body))


SOFTMAX_AND_MATMUL = """
    @pl.program
    class S:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[2048, 512], pl.FP32], w: pl.Tensor[[512, 32], pl.FP32],
                 b: pl.Tensor[[1, 512], pl.FP32], out: pl.Out[pl.Tensor[[2048, 512], pl.FP32]],
                 mm: pl.Out[pl.Tensor[[2048, 32], pl.FP32]]
                 ) -> tuple[pl.Tensor[[2048, 512], pl.FP32], pl.Tensor[[2048, 32], pl.FP32]]:
            with pl.at(level=pl.Level.CORE_GROUP):
                xb = pl.col_expand_add(x, b)
                m = pl.row_max(xb)
                e = pl.exp(pl.row_expand_sub(xb, m))
                s = pl.row_sum(e)
                out = pl.row_expand_div(e, s)
            with pl.at(level=pl.Level.CORE_GROUP):
                mm = pl.matmul(x, w)
            return out, mm
"""


def test_blocked_softmax_and_matmul_match_torch():
    compiled = pl.compile(parse(SOFTMAX_AND_MATMUL))
    x, w, b = torch.randn(2048, 512), torch.randn(512, 32), torch.randn(1, 512)
    out, mm = torch.empty(2048, 512), torch.empty(2048, 32)
    got_out, got_mm = compiled(x, w, b, out, mm)
    torch.testing.assert_close(out, torch.softmax(x + b, dim=-1))
    torch.testing.assert_close(mm, x @ w, rtol=1e-4, atol=1e-3)
    assert got_out.data_ptr() == out.data_ptr() and got_mm.data_ptr() == mm.data_ptr()
