"""The default pipeline lowers every corpus program with all properties verified; mixed
kernels come out as AIC + AIV + Group functions joined by pipe operations."""

from __future__ import annotations

from pathlib import Path

import pytest

import plang as pl
from plang.ir import FunctionType, GlobalVar, Program
from plang.passes import PassManager
from plang.passes.analysis.var_uses import calls_in

PROGRAMS = Path(__file__).parent / "programs"
# programs whose lowering still needs a fix outside the pass pipeline
BLOCKED: dict[str, str] = {}


def lower(name: str) -> Program:
    path = PROGRAMS / name
    return PassManager("Default", verify=True).run(pl.parse(path.read_text(), filename=str(path)))


def ops(prog: Program, fn: str) -> list[str]:
    return [c.op.name for c in calls_in(prog.get(fn).body) if not isinstance(c.op, GlobalVar)]


def calls(prog: Program, fn: str) -> list[str]:
    return [c.op.name for c in calls_in(prog.get(fn).body) if isinstance(c.op, GlobalVar)]


@pytest.mark.parametrize("name", sorted(p.name for p in PROGRAMS.glob("*.py")))
def test_default_pipeline_lowers_with_verification(name):
    prog = lower(name)
    for fn in prog.functions.values():
        assert fn.func_type is not FunctionType.InCore, f"{fn.name} was not expanded"
        if fn.func_type.is_core:
            assert not any(o.startswith("tensor.") and o != "tensor.dim" for o in ops(prog, fn.name))


@pytest.mark.parametrize("name, kernel, c2v, v2c", [
    ("flash_attention.py", "flash_attn", 2, 1),
    ("linear_relu.py", "linear_relu", 1, 0),
    ("manual_split_aiv.py", "two_matmuls", 1, 1),
])
def test_mixed_kernels_become_aic_aiv_and_group(name, kernel, c2v, v2c):
    prog = lower(name)
    aic, aiv, group = (prog.get(f"{kernel}_aic"), prog.get(f"{kernel}_aiv"), prog.get(kernel))
    assert (aic.func_type, aiv.func_type, group.func_type) == (FunctionType.AIC, FunctionType.AIV,
                                                               FunctionType.Group)
    assert calls(prog, kernel) == [f"{kernel}_aic", f"{kernel}_aiv"]
    cube, vector = ops(prog, aic.name), ops(prog, aiv.name)
    assert cube.count("tile.tpush_to_aiv") == vector.count("tile.tpop_from_aic") == c2v
    assert vector.count("tile.tfree_to_aic") == c2v
    assert vector.count("tile.tpush_to_aic") == cube.count("tile.tpop_from_aiv") == v2c
    assert cube.count("tile.tfree_to_aiv") == v2c
    assert not any(o.startswith("tile.") and o in ("tile.exp", "tile.add", "tile.relu") for o in cube)
    assert "tile.matmul" in cube and "tile.matmul" not in vector


def test_flash_attention_lanes_take_half_the_rows():
    prog = lower("flash_attention.py")
    aiv = prog.get("flash_attn_aiv")
    assert "tile.get_subblock_idx" in ops(prog, aiv.name)
    pops = [c for c in calls_in(aiv.body)
            if not isinstance(c.op, GlobalVar) and c.op.name == "tile.tpop_from_aic"]
    assert [c.type.shape[0].value for c in pops] == [32, 32]  # 64-row tiles, one half per lane
    assert all(c.kwargs["split"] == 1 for c in pops)


def test_pure_vector_and_cube_kernels_are_not_split():
    prog = lower("tiled_matmul.py")
    assert prog.get("mm_block").func_type is FunctionType.AIC
    prog = lower("spmd_block_idx.py")
    assert prog.get("scale_add").func_type is FunctionType.Spmd
    (kernel,) = calls(prog, "scale_add")
    assert prog.get(kernel).func_type is FunctionType.AIV
