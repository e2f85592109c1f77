"""ConvertTensorToTileOps matmul tiling: a tensor matmul whose operands or result would not fit
the cube's buffers becomes loops over output blocks reducing K in chunks; the result is
assembled straight into its DDR target, or gathered into an on-chip scratch (cast block by
block) for a later consumer."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, parse

from plang.ir.enums import MemorySpace
from plang.passes import PassError, convert_tensor_to_tile_ops
from plang.passes.analysis.matmul_tiling import choose_tiling
from plang.target import Device

VERIFY = ("IncoreTileOps", "TypeCheck", "UseAfterDef", "SSAForm")


def test_direct_store_tiles_rows_and_k_and_assembles_each_block_into_the_output():
    # [256,128] @ [128,256] FP32: b (128 KiB) exceeds Right and c (256 KiB) Acc; the cheapest
    # fit is [128, 256] blocks reducing K in two 64-wide chunks
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
                  out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
                c = pl.matmul(a, b)
                o = pl.assemble(out, c, [0, 0])
                return o
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
                  out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
                for mb, (o_mb,) in pl.range(2, init_values=(out,)):
                    a0 = pl.tile.load(a, [mb * 128, 0], [128, 64])
                    b0 = pl.tile.load(b, [0, 0], [64, 256])
                    c0 = pl.tile.matmul(a0, b0)
                    a1 = pl.tile.load(a, [mb * 128, 64], [128, 64])
                    b1 = pl.tile.load(b, [64, 0], [64, 256])
                    c1 = pl.tile.matmul_acc(c0, a1, b1)
                    o = pl.tile.store(c1, [mb * 128, 0], o_mb)
                    r = pl.yield_(o)
                return r
    """, VERIFY)


def test_chained_matmul_casts_each_block_into_an_on_chip_scratch_the_consumer_reads():
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 192], pl.BF16], b: pl.Tensor[[192, 256], pl.BF16],
                  e: pl.Tensor[[256, 64], pl.BF16]) -> pl.Tensor[[256, 64], pl.FP32]:
                c = pl.matmul(a, b)
                cb = pl.cast(c, pl.BF16, mode="rint")
                d = pl.matmul(cb, e)
                return d
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 192], pl.BF16], b: pl.Tensor[[192, 256], pl.BF16],
                  e: pl.Tensor[[256, 64], pl.BF16],
                  ret0: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
                e0 = pl.tile.load(e, [0, 0], [256, 64])
                s = pl.tile.create([256, 256], dtype=pl.BF16)
                for mb, (s_mb,) in pl.range(2, init_values=(s,)):
                    a0 = pl.tile.load(a, [mb * 128, 0], [128, 96])
                    b0 = pl.tile.load(b, [0, 0], [96, 256])
                    c0 = pl.tile.matmul(a0, b0)
                    a1 = pl.tile.load(a, [mb * 128, 96], [128, 96])
                    b1 = pl.tile.load(b, [96, 0], [96, 256])
                    c1 = pl.tile.matmul_acc(c0, a1, b1)
                    cb = pl.tile.cast(c1, target_type=pl.BF16, mode="rint")
                    s1 = pl.tile.assemble(s_mb, cb, [mb * 128, 0])
                    s2 = pl.yield_(s1)
                d = pl.tile.matmul(s2, e0)  # the 128 KiB scratch fits Mat: split at L0 only
                st = pl.tile.store(d, [0, 0], ret0)
                return st
    """, VERIFY)


def test_a_result_that_fits_acc_only_splits_k_in_a_loop():
    # a [128, 4096] BF16 lhs (1 MiB, over Mat): 256-wide chunks fit Left, sixteen of them
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[128, 4096], pl.BF16],
                  b: pl.Tensor[[4096, 128], pl.BF16]) -> pl.Tensor[[128, 128], pl.FP32]:
                c = pl.matmul(a, b)
                y = pl.exp(c)
                return y
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[128, 4096], pl.BF16], b: pl.Tensor[[4096, 128], pl.BF16],
                  ret0: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
                a0 = pl.tile.load(a, [0, 0], [128, 256])
                b0 = pl.tile.load(b, [0, 0], [256, 128])
                c0 = pl.tile.matmul(a0, b0)
                for kb, (acc,) in pl.range(1, 16, init_values=(c0,)):
                    ak = pl.tile.load(a, [0, kb * 256], [128, 256])
                    bk = pl.tile.load(b, [kb * 256, 0], [256, 128])
                    c1 = pl.tile.matmul_acc(acc, ak, bk)
                    c2 = pl.yield_(c1)
                y = pl.tile.exp(c2)
                st = pl.tile.store(y, [0, 0], ret0)
                return st
    """, VERIFY)


def test_a_matmul_inside_a_loop_reads_its_blocks_through_the_slice_of_its_operand():
    # the [128, 4096] slice (256 KiB) is never loaded whole: each K chunk is loaded from `a`
    check_pass("convert_tensor_to_tile_ops", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 4096], pl.BF16], b: pl.Tensor[[4096, 128], pl.BF16],
                  out: pl.Out[pl.Tensor[[256, 128], pl.FP32]]) -> pl.Tensor[[256, 128], pl.FP32]:
                for i, (o,) in pl.range(2, init_values=(out,)):
                    ai = pl.slice(a, [128, 4096], [i * 128, 0])
                    c = pl.matmul(ai, b)
                    o1 = pl.assemble(o, c, [i * 128, 0])
                    r = pl.yield_(o1)
                return r
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 4096], pl.BF16], b: pl.Tensor[[4096, 128], pl.BF16],
                  out: pl.Out[pl.Tensor[[256, 128], pl.FP32]]) -> pl.Tensor[[256, 128], pl.FP32]:
                for i, (o,) in pl.range(2, init_values=(out,)):
                    a0 = pl.tile.load(a, [i * 128, 0], [128, 256])
                    b0 = pl.tile.load(b, [0, 0], [256, 128])
                    c0 = pl.tile.matmul(a0, b0)
                    for kb, (acc,) in pl.range(1, 16, init_values=(c0,)):
                        ak = pl.tile.load(a, [i * 128, kb * 256], [128, 256])
                        bk = pl.tile.load(b, [kb * 256, 0], [256, 128])
                        c1 = pl.tile.matmul_acc(acc, ak, bk)
                        c = pl.yield_(c1)
                    o1 = pl.tile.store(c, [i * 128, 0], o)
                    r = pl.yield_(o1)
                return r
    """, VERIFY)


def test_untileable_matmuls_keep_the_capacity_error():
    src = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[256, 128], pl.FP32],
                  b: pl.Tensor[[256, 128], pl.FP32]) -> pl.Tensor[[256, 256], pl.FP32]:
                c = pl.matmul(a, b, b_trans=True)
                return c
    """
    with pytest.raises(PassError, match="'c' .* 262144 bytes"):
        convert_tensor_to_tile_ops()(parse(src))


@pytest.mark.parametrize("M, N, K, nbytes", [(256, 256, 128, 4), (256, 256, 192, 2), (128, 128, 512, 2),
                                             (1024, 1024, 1024, 2), (96, 80, 48, 4)])
def test_the_chosen_blocks_divide_the_dims_and_fit_every_buffer(M, N, K, nbytes):
    device = Device()
    t = choose_tiling(M, N, K, nbytes, nbytes, 4, device)
    assert M % t.m == 0 and N % t.n == 0 and K % t.k == 0
    assert t.m * t.k * nbytes <= device.capacity(MemorySpace.Left)
    assert t.k * t.n * nbytes <= device.capacity(MemorySpace.Right)
    assert t.m * t.n * 4 <= device.capacity(MemorySpace.Acc)


def test_a_smaller_device_gets_smaller_blocks():
    small = Device(capacities={MemorySpace.Left: 16 * 1024, MemorySpace.Right: 16 * 1024,
                               MemorySpace.Acc: 32 * 1024})
    t, big = choose_tiling(256, 256, 128, 4, 4, 4, small), choose_tiling(256, 256, 128, 4, 4, 4, Device())
    assert t.m * t.n * 4 <= 32 * 1024 and t.m * t.k * 4 <= 16 * 1024 and t.k * t.n * 4 <= 16 * 1024
    assert t.m * t.n * t.k < big.m * big.n * big.k
