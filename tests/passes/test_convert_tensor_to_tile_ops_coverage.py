"""ConvertTensorToTileOps covers every registered tensor op: each one converts to its tile
counterpart inside an InCore kernel (the table below must list every `tensor.*` op of the
registry, so a newly registered op fails here until it is mapped and tested)."""

from __future__ import annotations

import pytest
import torch
from pass_testing import parse

import plang as pl
from plang import passes
from plang.codegen.torch_ref import run_torch_ref
from plang.ir.ops import REGISTRY
from plang.ir.ops.composite import COMPOSITES
from plang.passes.analysis.var_uses import calls_in

#: tensor ops that stay tensor ops inside a kernel (shape metadata / DDR element access and copies)
KEPT = {"tensor.dim": "tensor.dim", "tensor.read": "tensor.read", "tensor.write": "tensor.write",
        "tensor.expand_clone": "tensor.expand_clone"}

#: op -> (a statement computing `r` from x, y [16, 16] FP32, i [16, 16] INT32, c [16, 1],
#:        w [1, 16] FP32 and s FP32 scalar; the tile op the converted kernel must call)
CASES = {
    "tensor.abs": ("r = pl.tensor.abs(x)", "tile.abs"),
    "tensor.add": ("r = pl.tensor.add(x, y)", "tile.add"),
    "tensor.adds": ("r = pl.tensor.adds(x, s)", "tile.adds"),
    "tensor.aic_gather": (None, None),  # split_aiv region only: covered in test_aiv_split_valid
    "tensor.aiv_shard": (None, None),
    "tensor.and_": ("r = pl.tensor.and_(i, i)", "tile.and_"),
    "tensor.ands": ("r = pl.tensor.ands(i, 3)", "tile.ands"),
    "tensor.arange": ("r = pl.tensor.arange(2, [1, 16], dtype=pl.INT32)", "tile.arange"),
    "tensor.assemble": ("r = pl.tensor.assemble(pl.tensor.create([32, 16], dtype=pl.FP32), x, [16, 0])",
                        "tile.assemble"),
    "tensor.cast": ("r = pl.tensor.cast(x, pl.BF16)", "tile.cast"),
    "tensor.cmp": ("r = pl.tensor.cmp(x, y, cmp_type=2)", "tile.cmp"),
    "tensor.cmps": ("r = pl.tensor.cmps(x, s, cmp_type=2)", "tile.cmps"),
    "tensor.col_argmax": ("r = pl.tensor.col_argmax(x)", "tile.col_argmax"),
    "tensor.col_argmin": ("r = pl.tensor.col_argmin(x)", "tile.col_argmin"),
    "tensor.col_expand": ("r = pl.tensor.col_expand(x, w)", "tile.col_expand"),
    "tensor.col_expand_add": ("r = pl.tensor.col_expand_add(x, w)", "tile.col_expand_add"),
    "tensor.col_expand_div": ("r = pl.tensor.col_expand_div(x, w)", "tile.col_expand_div"),
    "tensor.col_expand_expdif": ("r = pl.tensor.col_expand_expdif(x, w)", "tile.col_expand_expdif"),
    "tensor.col_expand_max": ("r = pl.tensor.col_expand_max(x, w)", "tile.col_expand_max"),
    "tensor.col_expand_min": ("r = pl.tensor.col_expand_min(x, w)", "tile.col_expand_min"),
    "tensor.col_expand_mul": ("r = pl.tensor.col_expand_mul(x, w)", "tile.col_expand_mul"),
    "tensor.col_expand_sub": ("r = pl.tensor.col_expand_sub(x, w)", "tile.col_expand_sub"),
    "tensor.col_max": ("r = pl.tensor.col_max(x)", "tile.col_max"),
    "tensor.col_min": ("r = pl.tensor.col_min(x)", "tile.col_min"),
    "tensor.col_prod": ("r = pl.tensor.col_prod(x)", "tile.col_prod"),
    "tensor.col_sum": ("r = pl.tensor.col_sum(x)", "tile.col_sum"),
    "tensor.concat": ("r = pl.tensor.concat(x, y)", "tile.concat"),
    "tensor.cos": ("r = pl.tensor.cos(x)", "tile.cos"),
    "tensor.create": ("r = pl.tensor.adds(pl.tensor.create([16, 16], dtype=pl.FP32), s)", "tile.create"),
    "tensor.dim": ("r = pl.tensor.adds(x, pl.cast(pl.tensor.dim(x, 0), pl.FP32))", "tensor.dim"),
    "tensor.expand_clone": ("r = pl.tensor.expand_clone(c, x)", "tensor.expand_clone"),
    "tensor.div": ("r = pl.tensor.div(x, y)", "tile.div"),
    "tensor.divs": ("r = pl.tensor.divs(x, s)", "tile.divs"),
    "tensor.exp": ("r = pl.tensor.exp(x)", "tile.exp"),
    "tensor.expands": ("r = pl.tensor.expands(x, s)", "tile.expands"),
    "tensor.fmod": ("r = pl.tensor.fmod(x, y)", "tile.fmod"),
    "tensor.fmods": ("r = pl.tensor.fmods(x, s)", "tile.fmods"),
    "tensor.full": ("r = pl.tensor.full([16, 16], dtype=pl.FP32, value=1.5)", "tile.full"),
    "tensor.gather": ("r = pl.tensor.gather(x, pl.tensor.ands(i, 15), dim=1)", "tile.gather"),
    "tensor.gather_compare": ("r = pl.tensor.gather(x, kvalue=s, cmp_mode='gt', out_cols=4)[0]",
                              "tile.gather_compare"),
    "tensor.gather_count": ("r = pl.tensor.gather(x, kvalue=s, cmp_mode='gt', out_cols=4)[1]",
                            "tile.gather_count"),
    "tensor.gather_mask": ("r = pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P1010)",
                           "tile.gather_mask"),
    "tensor.get_block_idx": ("r = pl.tensor.adds(x, pl.cast(pl.tensor.get_block_idx(), pl.FP32))",
                             "tile.get_block_idx"),
    "tensor.get_block_num": ("r = pl.tensor.adds(x, pl.cast(pl.tensor.get_block_num(), pl.FP32))",
                             "tile.get_block_num"),
    "tensor.get_subblock_idx": ("r = pl.tensor.adds(x, pl.cast(pl.tensor.get_subblock_idx(), pl.FP32))",
                                "tile.get_subblock_idx"),
    "tensor.log": ("r = pl.tensor.log(pl.tensor.abs(x))", "tile.log"),
    "tensor.matmul": ("r = pl.tensor.matmul(x, y)", "tile.matmul"),
    "tensor.matmul_acc": ("r = pl.tensor.matmul_acc(pl.tensor.matmul(x, y), x, y)", "tile.matmul_acc"),
    "tensor.maximum": ("r = pl.tensor.maximum(x, y)", "tile.maximum"),
    "tensor.maximums": ("r = pl.tensor.maximums(x, s)", "tile.maximums"),
    "tensor.minimum": ("r = pl.tensor.minimum(x, y)", "tile.minimum"),
    "tensor.minimums": ("r = pl.tensor.minimums(x, s)", "tile.minimums"),
    "tensor.mrgsort": ("r = pl.tensor.mrgsort(pl.tensor.sort32(pl.tensor.concat(x, y), "
                       "pl.tensor.concat(i, i)), x)", "tile.mrgsort"),
    "tensor.mul": ("r = pl.tensor.mul(x, y)", "tile.mul"),
    "tensor.muls": ("r = pl.tensor.muls(x, s)", "tile.muls"),
    "tensor.neg": ("r = pl.tensor.neg(x)", "tile.neg"),
    "tensor.not_": ("r = pl.tensor.not_(i)", "tile.not_"),
    "tensor.or_": ("r = pl.tensor.or_(i, i)", "tile.or_"),
    "tensor.ors": ("r = pl.tensor.ors(i, 3)", "tile.ors"),
    "tensor.random": ("r = pl.random(1, 2, 3, 4, 5, 6, [16, 16], dtype=pl.INT32)", "tile.random"),
    "tensor.read": ("r = pl.tensor.adds(x, pl.tensor.read(x, [1, 2]))", "tensor.read"),
    "tensor.recip": ("r = pl.tensor.recip(x)", "tile.recip"),
    "tensor.relu": ("r = pl.tensor.relu(x)", "tile.relu"),
    "tensor.reshape": ("r = pl.tensor.reshape(x, [8, 32])", "tile.reshape"),
    "tensor.view": ("r = pl.tensor.view(x, [8, 32])", "tile.reshape"),
    "tensor.set_validshape": ("r = pl.tensor.set_validshape(x, 8, 16)", "tile.set_validshape"),
    "tensor.fillpad": ("r = pl.tensor.fillpad(pl.tensor.set_validshape(x, 8, 16), 0)", "tile.fillpad"),
    "tensor.fillpad_expand": ("r = pl.tensor.fillpad_expand(x, [32, 16])", "tile.fillpad_expand"),
    "tensor.row_argmax": ("r = pl.tensor.row_argmax(x)", "tile.row_argmax"),
    "tensor.row_argmin": ("r = pl.tensor.row_argmin(x)", "tile.row_argmin"),
    "tensor.row_expand": ("r = pl.tensor.row_expand(x, c)", "tile.row_expand"),
    "tensor.row_expand_add": ("r = pl.tensor.row_expand_add(x, c)", "tile.row_expand_add"),
    "tensor.row_expand_div": ("r = pl.tensor.row_expand_div(x, c)", "tile.row_expand_div"),
    "tensor.row_expand_expdif": ("r = pl.tensor.row_expand_expdif(x, c)", "tile.row_expand_expdif"),
    "tensor.row_expand_max": ("r = pl.tensor.row_expand_max(x, c)", "tile.row_expand_max"),
    "tensor.row_expand_min": ("r = pl.tensor.row_expand_min(x, c)", "tile.row_expand_min"),
    "tensor.row_expand_mul": ("r = pl.tensor.row_expand_mul(x, c)", "tile.row_expand_mul"),
    "tensor.row_expand_sub": ("r = pl.tensor.row_expand_sub(x, c)", "tile.row_expand_sub"),
    "tensor.row_max": ("r = pl.tensor.row_max(x)", "tile.row_max"),
    "tensor.row_min": ("r = pl.tensor.row_min(x)", "tile.row_min"),
    "tensor.row_prod": ("r = pl.tensor.row_prod(x)", "tile.row_prod"),
    "tensor.row_sum": ("r = pl.tensor.row_sum(x)", "tile.row_sum"),
    "tensor.rsqrt": ("r = pl.tensor.rsqrt(pl.tensor.abs(x))", "tile.rsqrt"),
    "tensor.scatter": ("r = pl.tensor.scatter(x, pl.tensor.ands(i, 15), y, dim=1)", "tile.scatter"),
    "tensor.scatter_mask": ("r = pl.tensor.scatter(pl.tensor.slice(y, [16, 4], [0, 0]), mask_pattern=3, "
                            "dst=x)", "tile.scatter_mask"),
    "tensor.scatter_update": ("r = pl.tensor.scatter_update(x, -2, pl.tensor.slice(i, [2, 4], [0, 0]), "
                              "pl.tensor.slice(y, [8, 16], [0, 0]))", "tile.scatter_update"),
    "tensor.shl": ("r = pl.tensor.shl(i, pl.tensor.ands(i, 7))", "tile.shl"),
    "tensor.shls": ("r = pl.tensor.shls(i, 2)", "tile.shls"),
    "tensor.shr": ("r = pl.tensor.shr(i, pl.tensor.ands(i, 7))", "tile.shr"),
    "tensor.shrs": ("r = pl.tensor.shrs(i, 2)", "tile.shrs"),
    "tensor.sigmoid": ("r = pl.tensor.sigmoid(x)", "tile.sigmoid"),
    "tensor.sin": ("r = pl.tensor.sin(x)", "tile.sin"),
    "tensor.slice": ("r = pl.tensor.slice(pl.tensor.exp(x), [8, 16], [8, 0])", "tile.slice"),
    "tensor.sort32": ("r = pl.tensor.sort32(pl.tensor.concat(x, y), pl.tensor.concat(i, i))", "tile.sort32"),
    "tensor.sqrt": ("r = pl.tensor.sqrt(pl.tensor.abs(x))", "tile.sqrt"),
    "tensor.sub": ("r = pl.tensor.sub(x, y)", "tile.sub"),
    "tensor.subs": ("r = pl.tensor.subs(x, s)", "tile.subs"),
    "tensor.tanh": ("r = pl.tensor.tanh(x)", "tile.tanh"),
    "tensor.transpose": ("r = pl.tensor.transpose(x, 0, 1)", "tile.transpose"),
    "tensor.write": ("r = pl.tensor.write(pl.tensor.exp(x), [1, 2], s)", "tile.write"),
    "tensor.xor": ("r = pl.tensor.xor(i, pl.tensor.shls(i, 1))", "tile.xor"),
    "tensor.xors": ("r = pl.tensor.xors(i, 5)", "tile.xors"),
}
# composite ops (one registry entry each) convert like any unary op
CASES.update({f"tensor.{n}": (f"r = pl.tensor.{n}(x)", f"tile.{n}") for n in COMPOSITES})

TENSOR_OPS = sorted(n for n in REGISTRY if n.startswith("tensor."))


def test_every_registered_tensor_op_is_in_the_table():
    assert sorted(CASES) == TENSOR_OPS


def test_only_kept_ops_lack_a_tile_counterpart():
    renamed = {"tensor.view"}  # a row-major view becomes tile.reshape
    missing = [n for n in TENSOR_OPS if "tile." + REGISTRY[n].short_name not in REGISTRY and n not in renamed]
    assert missing == [n for n in KEPT if "tile." + n.split(".", 1)[1] not in REGISTRY]


def program_for(line: str) -> str:
    return f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
                  i: pl.Tensor[[16, 16], pl.INT32], c: pl.Tensor[[16, 1], pl.FP32],
                  w: pl.Tensor[[1, 16], pl.FP32], s: pl.Scalar[pl.FP32]):
                {line}
                return r
    """


RUNNABLE = [n for n in TENSOR_OPS if CASES[n][0] is not None]


@pytest.mark.parametrize("name", RUNNABLE)
def test_tensor_op_converts_to_its_tile_op(name):
    line, tile_op = CASES[name]
    out = passes.convert_tensor_to_tile_ops()(passes.flatten_call_expr()(parse(program_for(line))))
    for prop in ("IncoreTileOps", "TypeCheck", "UseAfterDef"):
        passes.get_property(prop).verify(out)
    called = {c.op.name for c in calls_in(out.functions["k"].body) if hasattr(c.op, "namespace")}
    assert tile_op in called


# ------------------------------------------------------------------ end to end
GENERATE_AND_INDEX = """
    @pl.program
    class G:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], idx: pl.Tensor[[16, 16], pl.INT32],
                 src: pl.Tensor[[16, 16], pl.FP32], seq: pl.Out[pl.Tensor[[1, 16], pl.INT32]],
                 g: pl.Out[pl.Tensor[[16, 16], pl.FP32]], sc: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
                 ) -> tuple[pl.Tensor[[1, 16], pl.INT32], pl.Tensor[[16, 16], pl.FP32],
                            pl.Tensor[[16, 16], pl.FP32]]:
            with pl.at(level=pl.Level.CORE_GROUP):
                seq = pl.tensor.arange(3, [1, 16], dtype=pl.INT32)
                g = pl.tensor.gather(x, idx, dim=1)
                sc = pl.tensor.scatter(x, idx, src, dim=1)
            return seq, g, sc
"""


def generate_and_index_args():
    x, src = torch.randn(16, 16), torch.randn(16, 16)
    idx = torch.stack([torch.randperm(16) for _ in range(16)]).to(torch.int32)
    outs = torch.empty(1, 16, dtype=torch.int32), torch.empty(16, 16), torch.empty(16, 16)
    expected = (torch.arange(3, 19, dtype=torch.int32)[None], torch.gather(x, 1, idx.long()),
                x.scatter(1, idx.long(), src))
    return (x, idx, src, *outs), expected


def test_lowered_arange_gather_scatter_match_torch():
    lowered = passes.PassManager().run(parse(GENERATE_AND_INDEX))
    kernel = lowered.functions["main_incore_0"]
    assert {"tile.arange", "tile.gather", "tile.scatter"} <= {c.op.name for c in calls_in(kernel.body)}
    args, expected = generate_and_index_args()
    got = run_torch_ref(lowered, *args)
    for g, e in zip(got, expected):
        assert torch.equal(g, e)


def test_arange_gather_scatter_run_on_the_chip():
    compiled = pl.compile(parse(GENERATE_AND_INDEX))
    args, expected = generate_and_index_args()
    compiled(*args)
    for g, e in zip(args[3:], expected):
        assert torch.equal(g, e)
