"""FuseTileOps: fusion decisions written into core kernels' IR (before / expected)."""
# ruff: noqa: E501  (expected IR reads best one statement per line)

from __future__ import annotations

import textwrap

from pass_testing import check_pass, parse

from plang import passes
from plang.ir import assert_structural_equal

VERIFY = ("TypeCheck", "SSAForm", "UseAfterDef")
SIGNATURE = ("def k(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) "
             "-> pl.Tensor[[64, 128], pl.FP32]:")


def kernel(body: str, kind: str = "AIV") -> str:
    """A one-kernel program whose kernel `k` has `body`."""
    return (f"@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.{kind})\n    {SIGNATURE}\n"
            + textwrap.indent(textwrap.dedent(body), " " * 8))

SOFTMAX = kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
    m: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_max(t)
    d: pl.Tile[[64, 128], pl.FP32] = pl.tile.row_expand_sub(t, m)
    e: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(d)
    s: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(e)
    p: pl.Tile[[64, 128], pl.FP32] = pl.tile.row_expand_div(e, s)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(p, [0, 0], out)
    return out_1
""")


def test_row_softmax_becomes_one_row_region():
    check_pass("fuse_tile_ops", SOFTMAX, kernel("""
    with pl.fused(rows=64):
        with pl.fused():
            t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
            m: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_max(t)
        with pl.fused():
            e: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(pl.tile.row_expand_sub(t, m))
            s: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(e)
        out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.row_expand_div(e, s), [0, 0], out)
    return out_1
"""), verify=VERIFY)


def test_the_pass_is_idempotent():
    once = passes.fuse_tile_ops()(parse(SOFTMAX))
    assert_structural_equal(passes.fuse_tile_ops()(once), once)


def test_a_chain_without_reuse_fuses_into_its_store_without_a_region():
    check_pass("fuse_tile_ops", kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
    a: pl.Tile[[64, 128], pl.FP32] = pl.tile.adds(t, 1.0)
    e: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(a)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e, [0, 0], out)
    return out_1
"""), kernel("""
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.exp(pl.tile.adds(pl.tile.load(x, [0, 0], [64, 128]), 1.0)), [0, 0], out)
    return out_1
"""), verify=VERIFY)


def test_a_write_in_between_keeps_the_producer_in_place():
    """The store may change what the load reads, so the load is not moved past it."""
    before = kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(out, [0, 0], [64, 128])
    z: pl.Tile[[64, 128], pl.FP32] = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0, 0], out)
    e: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(t)
    out_2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e, [0, 0], out_1)
    return out_2
""")
    check_pass("fuse_tile_ops", before, kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(out, [0, 0], [64, 128])
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.full([64, 128], dtype=pl.FP32, value=0.0), [0, 0], out)
    out_2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.exp(t), [0, 0], out_1)
    return out_2
"""), verify=VERIFY)


def test_column_ops_and_matmul_operands_stay_separate():
    """A column reduction is not row-local (no region) and does not stream its operand
    (the producer keeps its own statement and shares its pass with no reduction)."""
    check_pass("fuse_tile_ops", kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
    e: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(t)
    c: pl.Tile[[1, 128], pl.FP32] = pl.tile.col_sum(e)
    r: pl.Tile[[64, 128], pl.FP32] = pl.tile.col_expand_mul(e, c)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(r, [0, 0], out)
    return out_1
"""), kernel("""
    e: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(pl.tile.load(x, [0, 0], [64, 128]))
    c: pl.Tile[[1, 128], pl.FP32] = pl.tile.col_sum(e)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.col_expand_mul(e, c), [0, 0], out)
    return out_1
"""), verify=VERIFY)


def test_loop_yields_are_not_consumers_branch_yields_are():
    before = kernel("""
    z: pl.Tile[[64, 128], pl.FP32] = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
    for i, (acc,) in pl.range(4, init_values=(z,)):
        t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
        acc_1: pl.Tile[[64, 128], pl.FP32] = pl.tile.add(acc, t)
        acc_2 = pl.yield_(acc_1)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc_2, [0, 0], out)
    return out_1
""")
    after = kernel("""
    z: pl.Tile[[64, 128], pl.FP32] = pl.tile.full([64, 128], dtype=pl.FP32, value=0.0)
    for i, (acc,) in pl.range(4, init_values=(z,)):
        acc_1: pl.Tile[[64, 128], pl.FP32] = pl.tile.add(acc, pl.tile.load(x, [0, 0], [64, 128]))
        acc_2 = pl.yield_(acc_1)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc_2, [0, 0], out)
    return out_1
""")
    check_pass("fuse_tile_ops", before, after, verify=VERIFY)


def test_a_matmul_reads_its_rhs_load_as_it_packs_it():
    """A matmul streams its B operand (packing it as it reads it), so a single-use load
    there is fused — also into a matmul_acc a loop yields; an A read twice keeps a buffer."""
    before = kernel("""
    a: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 0], [64, 64])
    b: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 64], [64, 64])
    c: pl.Tile[[64, 64], pl.FP32] = pl.tile.matmul(a, b)
    for i, (acc,) in pl.range(2, init_values=(c,)):
        b2: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 64], [64, 64])
        acc_1 = pl.yield_(pl.tile.matmul_acc(acc, a, b2))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
    return out_1
""")
    after = kernel("""
    a: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 0], [64, 64])
    c: pl.Tile[[64, 64], pl.FP32] = pl.tile.matmul(a, pl.tile.load(x, [0, 64], [64, 64]))
    for i, (acc,) in pl.range(2, init_values=(c,)):
        acc_1 = pl.yield_(pl.tile.matmul_acc(acc, a, pl.tile.load(x, [0, 64], [64, 64])))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
    return out_1
""")
    check_pass("fuse_tile_ops", before, after, verify=VERIFY)


def test_a_matmul_reads_a_single_use_lhs_load_where_it_lies():
    """A single-use load of a matmul's A is fused as well: the micro-kernel broadcasts A's
    elements from DDR, so the tile need not be copied first."""
    check_pass("fuse_tile_ops", kernel("""
    a: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 0], [64, 64])
    b: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 64], [64, 64])
    c: pl.Tile[[64, 64], pl.FP32] = pl.tile.matmul(a, b)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
    return out_1
"""), kernel("""
    c: pl.Tile[[64, 64], pl.FP32] = pl.tile.matmul(pl.tile.load(x, [0, 0], [64, 64]), pl.tile.load(x, [0, 64], [64, 64]))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
    return out_1
"""), verify=VERIFY)


def test_a_matmul_with_a_fused_rhs_matches_torch():
    import torch

    from plang.codegen.kernel import compile_kernel

    k = compile_kernel(passes.fuse_tile_ops()(parse(kernel("""
    a: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 0], [64, 64])
    b: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 64], [64, 64])
    c: pl.Tile[[64, 64], pl.FP32] = pl.tile.matmul(a, pl.tile.exp(b))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
    return out_1
"""))).get("k"))
    x, out = torch.randn(64, 128), torch.zeros(64, 128)
    k(x, out)
    torch.testing.assert_close(out[:, :64], x[:, :64] @ x[:, 64:].exp(), rtol=1e-5, atol=1e-4)


_PAST_A_REGION = kernel("""
    b: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 64], [64, 64])
    t: pl.Tile[[32, 64], pl.FP32] = pl.tile.load(x, [0, 0], [32, 64])
    m: pl.Tile[[32, 1], pl.FP32] = pl.tile.row_max(t)
    e: pl.Tile[[32, 64], pl.FP32] = pl.tile.row_expand_expdif(t, m)
    s: pl.Tile[[32, 1], pl.FP32] = pl.tile.row_sum(e)
    p: pl.Tile[[32, 64], pl.FP32] = pl.tile.row_expand_div(e, s)
    c: pl.Tile[[32, 64], pl.FP32] = pl.tile.matmul(p, b)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
    return out_1
""")


def test_a_load_moves_past_a_row_region_into_the_matmul_reading_it():
    """Attention's P @ V: the V load before the row softmax is fused into the matmul after
    it (a region of tile ops writes no memory the load reads), so B is packed straight
    from DDR instead of being copied into a tile first; the result matches torch."""
    import torch

    from plang.codegen.kernel import compile_kernel

    check_pass("fuse_tile_ops", _PAST_A_REGION, kernel("""
    with pl.fused(rows=32):
        with pl.fused():
            t: pl.Tile[[32, 64], pl.FP32] = pl.tile.load(x, [0, 0], [32, 64])
            m: pl.Tile[[32, 1], pl.FP32] = pl.tile.row_max(t)
        with pl.fused():
            e: pl.Tile[[32, 64], pl.FP32] = pl.tile.row_expand_expdif(t, m)
            s: pl.Tile[[32, 1], pl.FP32] = pl.tile.row_sum(e)
        p: pl.Tile[[32, 64], pl.FP32] = pl.tile.row_expand_div(e, s)
    c: pl.Tile[[32, 64], pl.FP32] = pl.tile.matmul(p, pl.tile.load(x, [0, 64], [64, 64]))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
    return out_1
"""), verify=VERIFY)
    k = compile_kernel(passes.fuse_tile_ops()(parse(_PAST_A_REGION)).get("k"))
    x, out = torch.randn(64, 128), torch.zeros(64, 128)
    k(x, out)
    want = torch.softmax(x[:32, :64], -1) @ x[:, 64:]
    torch.testing.assert_close(out[:32, :64], want, rtol=1e-5, atol=1e-5)


def test_only_core_functions_are_fused():
    src = kernel("""
    a: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.exp(x)
    b: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.adds(a, 1.0)
    return b
""", kind="Orchestration")
    check_pass("fuse_tile_ops", src, src)


def test_user_written_regions_are_checked_by_codegen():
    """A `with pl.fused(rows=..)` the parser read keeps its meaning only if it is row-local."""
    import pytest

    from plang.codegen.kernel import KernelCompileError, compile_kernel

    prog = parse(kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
    with pl.fused(rows=64):
        c: pl.Tile[[1, 128], pl.FP32] = pl.tile.col_sum(t)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.col_expand_mul(t, c), [0, 0], out)
    return out_1
"""))
    with pytest.raises(KernelCompileError, match="not row-local with 64 rows"):
        compile_kernel(prog.get("k"))


def _example(name: str):
    import runpy
    from pathlib import Path

    return runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / name))


def test_lowered_examples_print_their_fusion():
    """`lower()` of the softmax and flash-attention examples shows what codegen will fuse."""
    import torch

    softmax = _example("03_row_softmax.py")["row_softmax"]
    x = torch.randn(64, 512)
    text = softmax.lower(x, torch.empty_like(x)).as_python()
    assert "with pl.fused(rows=16):" in text and "pl.tile.exp(pl.tile.row_expand_sub(t, row_max))" in text
    assert "pl.tile.store(pl.tile.row_expand_div(e, row_sum)" in text

    flash = _example("06_flash_attention.py")["flash_attention"]
    q, kt, v = (torch.randn(*s).to(torch.bfloat16) for s in ((64, 128), (128, 256), (256, 128)))
    text = flash.lower(q, kt, v, torch.empty(64, 128)).as_python()
    assert "with pl.fused(rows=32):" in text and "with pl.fused():" in text


_TRANSPOSED_B = kernel("""
    a: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 0], [64, 64])
    acc0: pl.Tile[[64, 32], pl.FP32] = pl.tile.full([64, 32], dtype=pl.FP32, value=0.0)
    for i, (acc,) in pl.range(3, init_values=(acc0,)):
        b: pl.Tile[[32, 64], pl.FP32] = pl.tile.load(x, [{row}, 64], [32, 64]{valid})
        bt: pl.Tile[[64, 32], pl.FP32] = pl.tile.transpose(b, axis1=0, axis2=1)
        acc_1 = pl.yield_(pl.tile.matmul_acc(acc, a, pl.tile.move(bt, target_memory=pl.MemorySpace.Right)))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
    return out_1
""")


def test_a_transposed_load_fuses_into_the_matmul_reading_it_as_b():
    """A 2D transpose whose single use is a matmul's B (here through a move) is fused there
    with the load it transposes: B is packed from the loaded tile's columns."""
    after = kernel("""
    a: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(x, [0, 0], [64, 64])
    acc0: pl.Tile[[64, 32], pl.FP32] = pl.tile.full([64, 32], dtype=pl.FP32, value=0.0)
    for i, (acc,) in pl.range(3, init_values=(acc0,)):
        acc_1 = pl.yield_(pl.tile.matmul_acc(acc, a, pl.tile.move(pl.tile.transpose(pl.tile.load(x, [0, 64], [32, 64]), axis1=0, axis2=1), target_memory=pl.MemorySpace.Right)))
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
    return out_1
""")
    check_pass("fuse_tile_ops", _TRANSPOSED_B.format(row=0, valid=""), after, verify=VERIFY)


def test_a_transposed_b_packed_from_the_loaded_tile_matches_torch(block_packs):
    """The fused transpose of the same tile on each trip is packed from the loaded tile (by
    16 x 16 block transposes: a spy counts them) into the call's panel cache; one moving
    down the rows, or one whose load has a partial valid region (the rows past it zero), is
    transposed in a buffer per use."""
    import torch

    from plang.codegen.kernel import compile_kernel

    x = torch.randn(64, 128)
    for row, valid, rows in (("0", "", 32), ("i * 16", "", None), ("0", ", valid_shape=[20, 64]", 20)):
        block_packs.clear()
        k = compile_kernel(passes.fuse_tile_ops()(parse(_TRANSPOSED_B.format(row=row, valid=valid))).get("k"))
        out = torch.zeros(64, 128)
        assert bool(block_packs) == (row == "0" and not valid)
        k(x, out)
        b = x[:, 64:]
        if rows is None:
            want = sum(x[:, :64] @ b[16 * i:16 * i + 32].T for i in range(3))
        else:
            want = 3 * (x[:, :64] @ torch.cat([b[:rows], torch.zeros(32 - rows, 64)]).T)
        torch.testing.assert_close(out[:, :32], want, rtol=1e-5, atol=1e-4)


_VARIANCE = kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
    s: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(t)
    mean: pl.Tile[[64, 1], pl.FP32] = pl.tile.muls(s, 0.0078125)
    c: pl.Tile[[64, 128], pl.FP32] = pl.tile.row_expand_sub(t, mean)
    sq: pl.Tile[[64, 128], pl.FP32] = pl.tile.mul(c, c)
    v: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(sq)
    y: pl.Tile[[64, 128], pl.FP32] = pl.tile.row_expand_mul(c, v)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(y, [0, 0], out)
    return out_1
""")


def test_a_reduction_of_an_op_of_the_producer_shares_its_pass():
    """A variance: c = t - mean is kept (y reads it), and row_sum(c * c) is computed in c's
    pass, squaring each chunk as it is written; the result matches torch."""
    import torch

    from plang.codegen.kernel import compile_kernel

    check_pass("fuse_tile_ops", _VARIANCE, kernel("""
    with pl.fused(rows=64):
        with pl.fused():
            t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
            s: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(t)
        with pl.fused():
            c: pl.Tile[[64, 128], pl.FP32] = pl.tile.row_expand_sub(t, pl.tile.muls(s, 0.0078125))
            sq: pl.Tile[[64, 128], pl.FP32] = pl.tile.mul(c, c)
            v: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(sq)
        out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.row_expand_mul(c, v), [0, 0], out)
    return out_1
"""), verify=VERIFY)
    k = compile_kernel(passes.fuse_tile_ops()(parse(_VARIANCE)).get("k"))
    x, out = torch.randn(64, 128) * 2 + 1, torch.zeros(64, 128)
    k(x, out)
    c = x.double() - x.double().mean(1, keepdim=True)
    v = (c * c).sum(1, keepdim=True)
    # c's rounding error (an ulp of x) is scaled by the row's v (~512), so compare y / v to c.
    torch.testing.assert_close(out.double() / v, c, rtol=1e-5, atol=2e-6)


def test_an_op_reading_a_later_value_is_not_pulled_into_the_producers_pass():
    """sq reads d, assigned after c: computing sq in c's pass would read d before it exists,
    so c's pass takes nothing, and d's pass computes sq and its row sum."""
    import torch

    from plang.codegen.kernel import compile_kernel

    before = kernel("""
    t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
    c: pl.Tile[[64, 128], pl.FP32] = pl.tile.adds(t, 1.0)
    d: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(t)
    sq: pl.Tile[[64, 128], pl.FP32] = pl.tile.mul(c, d)
    v: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(sq)
    y: pl.Tile[[64, 128], pl.FP32] = pl.tile.row_expand_mul(pl.tile.mul(c, d), v)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(y, [0, 0], out)
    return out_1
""")
    check_pass("fuse_tile_ops", before, kernel("""
    with pl.fused(rows=64):
        t: pl.Tile[[64, 128], pl.FP32] = pl.tile.load(x, [0, 0], [64, 128])
        c: pl.Tile[[64, 128], pl.FP32] = pl.tile.adds(t, 1.0)
        with pl.fused():
            d: pl.Tile[[64, 128], pl.FP32] = pl.tile.exp(t)
            sq: pl.Tile[[64, 128], pl.FP32] = pl.tile.mul(c, d)
            v: pl.Tile[[64, 1], pl.FP32] = pl.tile.row_sum(sq)
    out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.row_expand_mul(pl.tile.mul(c, d), v), [0, 0], out)
    return out_1
"""), verify=VERIFY)
    k = compile_kernel(passes.fuse_tile_ops()(parse(before)).get("k"))
    x, out = torch.randn(64, 128), torch.zeros(64, 128)
    k(x, out)
    p = (x + 1) * x.exp()
    torch.testing.assert_close(out, p * p.sum(1, keepdim=True), rtol=1e-5, atol=1e-3)
