"""ConvertTensorToTileOps: a matmul's `a_trans` / `b_trans` become a `tile.transpose` of the
operand tile (of a loaded operand, the cube's transposed view in Mat)."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, line_of, parse

import plang as pl
from plang.passes import PassError, PassManager, convert_tensor_to_tile_ops

VERIFY = ("IncoreTileOps", "TypeCheck", "UseAfterDef", "SSAForm")


def test_both_operands_transposed():
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[48, 64], pl.FP16],
                  out: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
                c = pl.matmul(a, b, a_trans=True, b_trans=True)
                o = pl.assemble(out, c, [0, 0])
                return o
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[48, 64], pl.FP16],
                  out: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
                at = pl.tile.load(a, [0, 0], [64, 32])
                att = pl.tile.transpose(at, axis1=-2, axis2=-1)
                bt = pl.tile.load(b, [0, 0], [48, 64])
                btt = pl.tile.transpose(bt, axis1=-2, axis2=-1)
                c = pl.tile.matmul(att, btt)
                o = pl.tile.store(c, [0, 0], out)
                return o
    """, VERIFY)


def test_whole_read_only_operand_is_transposed_once_before_the_loop():
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[64, 16], pl.FP32], kk: pl.Tensor[[32, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
                for i, (o,) in pl.range(2, init_values=(out,)):
                    off = i * 32
                    qi = pl.slice(q, [32, 16], [off, 0])
                    s = pl.matmul(qi, kk, b_trans=True)
                    o2 = pl.assemble(o, s, [off, 0])
                    r = pl.yield_(o2)
                return r
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[64, 16], pl.FP32], kk: pl.Tensor[[32, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
                kt = pl.tile.load(kk, [0, 0], [32, 16])
                ktt = pl.tile.transpose(kt, axis1=-2, axis2=-1)
                for i, (o,) in pl.range(2, init_values=(out,)):
                    off = i * 32
                    qi = pl.tile.load(q, [off, 0], [32, 16])
                    s = pl.tile.matmul(qi, ktt)
                    o2 = pl.tile.store(s, [off, 0], o)
                    r = pl.yield_(o2)
                return r
    """, VERIFY)


def test_matmul_acc_transposes_each_sliced_operand_where_it_is_used():
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[32, 128], pl.INT8], kk: pl.Tensor[[64, 128], pl.INT8],
                  out: pl.Out[pl.Tensor[[32, 64], pl.INT32]]) -> pl.Tensor[[32, 64], pl.INT32]:
                q0 = pl.slice(q, [32, 64], [0, 0])
                k0 = pl.slice(kk, [64, 64], [0, 0])
                c0 = pl.matmul(q0, k0, b_trans=True)
                for d, (acc,) in pl.range(1, 2, init_values=(c0,)):
                    off = d * 64
                    qd = pl.slice(q, [32, 64], [0, off])
                    kd = pl.slice(kk, [64, 64], [0, off])
                    acc2 = pl.matmul_acc(acc, qd, kd, b_trans=True)
                    r = pl.yield_(acc2)
                o = pl.assemble(out, r, [0, 0])
                return o
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[32, 128], pl.INT8], kk: pl.Tensor[[64, 128], pl.INT8],
                  out: pl.Out[pl.Tensor[[32, 64], pl.INT32]]) -> pl.Tensor[[32, 64], pl.INT32]:
                q0 = pl.tile.load(q, [0, 0], [32, 64])
                k0 = pl.tile.load(kk, [0, 0], [64, 64])
                k0t = pl.tile.transpose(k0, axis1=-2, axis2=-1)
                c0 = pl.tile.matmul(q0, k0t)
                for d, (acc,) in pl.range(1, 2, init_values=(c0,)):
                    off = d * 64
                    qd = pl.tile.load(q, [0, off], [32, 64])
                    kd = pl.tile.load(kk, [0, off], [64, 64])
                    kdt = pl.tile.transpose(kd, axis1=-2, axis2=-1)
                    acc2 = pl.tile.matmul_acc(acc, qd, kdt)
                    r = pl.yield_(acc2)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, VERIFY)


def test_row_blocked_matmul_transposes_a_right_operand_parameter_once_before_the_loop():
    # s [1536, 64] FP32 (384 KiB) exceeds Vec: q is blocked by rows; kk is loaded and
    # transposed before the loop, so the blocks of s and e (512 B a row) have all of Vec
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[1536, 32], pl.FP32],
                  kk: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[1536, 64], pl.FP32]:
                s = pl.matmul(q, kk, b_trans=True)
                e = pl.exp(s)
                return e
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[1536, 32], pl.FP32], kk: pl.Tensor[[64, 32], pl.FP32],
                  ret0: pl.Out[pl.Tensor[[1536, 64], pl.FP32]]) -> pl.Tensor[[1536, 64], pl.FP32]:
                kt = pl.tile.load(kk, [0, 0], [64, 32])
                ktt = pl.tile.transpose(kt, axis1=-2, axis2=-1)
                for rb, (o,) in pl.range(4, init_values=(ret0,)):
                    row = rb * 384
                    qr = pl.tile.load(q, [row, 0], [384, 32])
                    s = pl.tile.matmul(qr, ktt)
                    e = pl.tile.exp(s)
                    st = pl.tile.store(e, [row, 0], o)
                    r = pl.yield_(st)
                return r
    """, VERIFY)


def test_row_blocked_matmul_counts_a_computed_transposed_operand_in_vec():
    # kf (8 KiB) stays in Vec and is transposed in every block (8 KiB more), next to kk's
    # 4 KiB: (192 - 20) KiB / 512 B a row = 344 rows, so 1500 rows go in blocks of 300
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[1500, 32], pl.FP32],
                  kk: pl.Tensor[[64, 32], pl.BF16]) -> pl.Tensor[[1500, 64], pl.FP32]:
                kf = pl.cast(kk, pl.FP32)
                s = pl.matmul(q, kf, b_trans=True)
                e = pl.exp(s)
                return e
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[1500, 32], pl.FP32], kk: pl.Tensor[[64, 32], pl.BF16],
                  ret0: pl.Out[pl.Tensor[[1500, 64], pl.FP32]]) -> pl.Tensor[[1500, 64], pl.FP32]:
                kt = pl.tile.load(kk, [0, 0], [64, 32])
                kf = pl.tile.cast(kt, pl.FP32)
                for rb, (o,) in pl.range(5, init_values=(ret0,)):
                    row = rb * 300
                    qr = pl.tile.load(q, [row, 0], [300, 32])
                    kft = pl.tile.transpose(kf, axis1=-2, axis2=-1)
                    s = pl.tile.matmul(qr, kft)
                    e = pl.tile.exp(s)
                    st = pl.tile.store(e, [row, 0], o)
                    r = pl.yield_(st)
                return r
    """, VERIFY)


def test_transposed_operand_over_the_mat_buffer_is_a_clear_error():
    # 1 MiB is over Mat, where the cube reads a transposed operand
    src = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, q: pl.Tensor[[16, 512], pl.FP32], w: pl.Tensor[[512, 512], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 512], pl.FP32]]) -> pl.Tensor[[16, 512], pl.FP32]:
                s = pl.matmul(q, w, b_trans=True)
                o = pl.assemble(out, s, [0, 0])
                return o
    """
    with pytest.raises(PassError) as err:
        convert_tensor_to_tile_ops()(parse(src))
    msg = err.value.message
    assert "'w'" in msg and "1048576 bytes" in msg and "Mat buffer's 524288 bytes" in msg
    assert err.value.line == line_of(src, "b_trans=True")


@pytest.mark.parametrize("flags", [{"a_trans": True}, {"b_trans": True}])
def test_a_loaded_operand_is_transposed_on_the_cube(flags):
    program = PassManager(verify=True).run(parse(f"""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[32, 32], pl.BF16], b: pl.Tensor[[32, 32], pl.BF16],
                     out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):
                    c = pl.matmul(a, b, {", ".join(f"{k}={v}" for k, v in flags.items())})
                    out = pl.assemble(out, c, [0, 0])
                return out
    """))
    kernel = program.functions["k"]
    ops = [c.op.name for c in _calls(kernel)]
    assert kernel.func_type is pl.FunctionType.AIC and "k_aiv" not in program.functions
    assert ops.count("tile.load") == 2 and "tile.transpose" in ops and "tile.matmul" in ops
    assert not any(name.startswith(("tile.tpush", "tile.tpop")) for name in ops)


def _calls(fn):
    from plang.passes.analysis.var_uses import calls_in
    return calls_in(fn.body)
