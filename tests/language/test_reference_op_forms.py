"""Reference op forms: `attrs=` call metadata, the outlined `pl.tile.aiv_shard(t, split=N)`,
`pl.tensor.view`, tensor `set_validshape` / `fillpad`, `fillpad_expand`, soft `syncall` and
strict-SSA rebinding in a nested block."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.codegen.torch_ref import run_torch_ref
from plang.errors import ParserError
from plang.ir.enums import SplitMode

from ._round_trip import round_trip


def _calls(prog):
    from plang.passes.analysis.var_uses import calls_in

    fns = prog.functions.values() if hasattr(prog, "functions") else [prog]
    return [c for f in fns for c in calls_in(f.body)]


def test_attrs_metadata_is_kept_and_printed():
    prog, text = round_trip('''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tile.load(a, [0, 0], [16, 16], attrs={"pipeline_membership": "0:1"})
        m = pl.tile.move(t, target_memory=pl.Mem.Vec, attrs={"flag": True, "n": 3})
        return pl.tile.store(m, [0, 0], out)
''')
    load = next(c for c in _calls(prog) if c.op.name == "tile.load")
    assert load.kwargs["attrs"] == {"pipeline_membership": "0:1"}
    assert "attrs={'flag': True, 'n': 3}" in text


def test_attrs_must_be_a_string_keyed_dict():
    with pytest.raises(ParserError, match="attrs="):
        pl.parse('''
import plang as pl
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    t = pl.tile.load(a, [0, 0], [16, 16], attrs=3)
    return a
''')


OUTLINED = '''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore, attrs={{"split": pl.SplitMode.UP_DOWN, "split_aiv": True}})
    def k(self, qk: pl.Tile[[128, 128], pl.FP32, pl.Mem.Mat],
          out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        lane = pl.tile.get_subblock_idx()
        half = pl.tile.aiv_shard(qk, {args})
        y = pl.tile.add(half, half)
        return pl.tile.store(y, [lane * 64, 0], out)
'''


def test_outlined_aiv_shard_carries_its_split_code():
    prog, text = round_trip(OUTLINED.format(args="split=1, lane_stride=7"))
    shard = next(c for c in _calls(prog) if c.op.name == "tile.aiv_shard")
    assert shard.kwargs["mode"] is SplitMode.UP_DOWN and shard.kwargs["lane_stride"] == 7
    assert [int(d.value) for d in shard.type.shape] == [64, 128]
    assert "split=1" in text and "mode=" not in text


@pytest.mark.parametrize("args, match", [
    ("split=5", "integer code"), ("split=1, mode=pl.SplitMode.UP_DOWN", "either"),
    ("lane_stride=7", "outlined form"), ("", "only valid inside")])
def test_outlined_aiv_shard_rejects(args, match):
    with pytest.raises(ParserError, match=match):
        pl.parse("import plang as pl\n" + OUTLINED.format(args=args).replace(", )", ")"))


VIEW = '''
@pl.function
def f(x: pl.Tensor[[2, 4, 8], pl.FP32], y: pl.Tensor[[8, 4], pl.FP32],
      out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
    v = pl.tensor.view(x, [8, 8])
    w: pl.Tensor[[4, 8], pl.FP32] = pl.tensor.view(y, layout=pl.TensorLayout.DN)
    n = pl.set_validshape(v, 4, 8)
    p = pl.fillpad(n, 0)
    e = pl.fillpad_expand(w, [8, 8], pad_value=-math.inf)
    s = pl.add(p, e)
    out = pl.assemble(out, s, [0, 0])
    return out
'''


def test_tensor_views_round_trip_and_type():
    prog, text = round_trip("import math\n" + VIEW)
    types = {c.op.name: c.type for c in _calls(prog)}
    assert types["tensor.set_validshape"].view.valid_shape[0].value == 4
    assert types["tensor.view"].rank == 2
    assert "pl.tensor.view(y, layout=pl.TensorLayout.DN)" in text


def test_tensor_views_numerics_match_torch():
    prog = pl.parse("import plang as pl\nimport math\n" + VIEW)
    x, y = torch.randn(2, 4, 8), torch.randn(8, 4)
    got = run_torch_ref(prog, x, y, torch.zeros(8, 8))
    v = x.reshape(8, 8)
    p = torch.zeros(8, 8)
    p[:4] = v[:4]
    e = torch.full((8, 8), float("-inf"))
    e[:4, :8] = y.T
    torch.testing.assert_close(got, p + e)


@pytest.mark.parametrize("body, match", [
    ("pl.tensor.view(x, [7, 8])", "cannot view"),
    ("pl.set_validshape(pl.tensor.view(x, [8, 8]), 9, 8)", "exceeds"),
    ("pl.fillpad_expand(x, [1, 4, 8])", "smaller"),
    ("pl.fillpad(x, 7)", "pad_value"),
])
def test_tensor_view_errors(body, match):
    with pytest.raises(ParserError, match=match):
        pl.parse(f'''
import plang as pl
@pl.function
def f(x: pl.Tensor[[2, 4, 8], pl.FP32]) -> pl.Tensor[[2, 4, 8], pl.FP32]:
    v = {body}
    return x
''')


def test_tensor_view_in_a_kernel_becomes_a_tile_reshape():
    from plang.passes.convert_tensor_to_tile_ops import _tile_form

    prog = pl.parse("import plang as pl\nimport math\n" + VIEW)
    forms = sorted(_tile_form(c) for c in _calls(prog) if c.op.name == "tensor.view")
    assert forms == ["tile.reshape", "tile.view"]  # a layout flip has no tile form


def test_soft_syncall_takes_a_workspace_and_a_count():
    _, text = round_trip('''
@pl.function(type=pl.FunctionType.InCore)
def k(ws: pl.Tensor[[16], pl.INT32]):
    pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=0)
    return
''')
    assert "gm_workspace=ws" in text
    for bad, match in (('mode="soft"', "needs gm_workspace"), ('gm_workspace=ws, used_cores=0', "belong to")):
        with pytest.raises(ParserError, match=match):
            pl.parse(f'''
import plang as pl
@pl.function(type=pl.FunctionType.InCore)
def k(ws: pl.Tensor[[16], pl.INT32]):
    pl.system.syncall({bad})
    return
''')


def test_strict_ssa_allows_rebinding_in_a_nested_block_only():
    round_trip('''
@pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
def f(x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
    brk: pl.Scalar[pl.BOOL] = False
    if n > 5:
        brk: pl.Scalar[pl.BOOL] = True
    return x
''')
    with pytest.raises(ParserError, match="assigned twice"):
        pl.parse('''
import plang as pl
@pl.function(strict_ssa=True)
def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    y = pl.add(x, 1.0)
    y = pl.add(x, 2.0)
    return y
''')
