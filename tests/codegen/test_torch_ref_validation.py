"""`plang.debug.validate_pass_ir_codegen_results` and `CompiledProgram.validate_ir`: the torch
reference of every dumped pass IR, run and compared, stopping at the pass that changed it."""

import shutil

import pytest
import torch

import plang.language as pl
from plang import ir
from plang.debug import validate_pass_ir_codegen_results


@pl.program
class ScoreExp:
    """A mixed kernel: the cube's matmul feeds the vector lanes' exp (split, expanded, piped)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        s = pl.matmul(pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat),
                      pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat))
        out = pl.store(pl.exp(pl.mul(s, 0.125)), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out = self.kernel(a, b, out)
        return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return ir.compile(ScoreExp, output_dir=str(tmp_path_factory.mktemp("score_exp")))


@pytest.fixture
def case():
    torch.manual_seed(0)
    a, b = torch.randn(32, 64), torch.randn(64, 32)
    return {"a": a, "b": b, "out": torch.zeros(32, 32)}, {"out": torch.exp((a @ b) * 0.125)}


def test_every_pass_keeps_the_result(compiled, case, capsys):
    tensors, expected = case
    report = compiled.validate_ir(tensors, expected, rtol=1e-5, atol=1e-5)
    dumps = sorted(p.stem for p in (compiled.output_dir / "passes_dump").glob("*.py"))
    assert sorted(report) == dumps and len(dumps) > 20
    assert any("ExpandMixedKernel" in name for name in report)
    assert all(diffs["out"] < 1e-4 for diffs in report.values())
    assert torch.count_nonzero(tensors["out"]) == 0  # each pass ran on clones
    assert "validate tensor: 'out', max_abs_diff:" in capsys.readouterr().out


def test_the_pass_that_changes_the_result_is_named(compiled, case, tmp_path):
    dump = tmp_path / "passes_dump"
    shutil.copytree(compiled.output_dir / "passes_dump", dump)
    broken = next(p for p in sorted(dump.glob("*.py")) if "ConvertTensorToTileOps" in p.name)
    text = broken.read_text()
    assert "0.125" in text
    broken.write_text(text.replace("0.125", "0.25"))
    tensors, expected = case
    with pytest.raises(AssertionError, match=rf"{broken.name}: tensor 'out' differs .*this pass changed"):
        validate_pass_ir_codegen_results(str(dump), tensors, expected)
    first = sorted(dump.glob("*.py"))[0]  # one file is accepted too
    assert list(validate_pass_ir_codegen_results(first, tensors, expected)) == [first.stem]


def test_bad_arguments_get_clear_errors(compiled, case, tmp_path):
    tensors, expected = case
    dump = compiled.output_dir / "passes_dump"
    with pytest.raises(FileNotFoundError, match="no pass IR at"):
        validate_pass_ir_codegen_results(tmp_path / "missing", tensors, expected)
    with pytest.raises(ValueError, match="holds no .py pass IR files"):
        validate_pass_ir_codegen_results(tmp_path, tensors, expected)
    with pytest.raises(TypeError, match=r"tensors\['a'\] must be a torch.Tensor"):
        validate_pass_ir_codegen_results(dump, {**tensors, "a": [1.0]}, expected)
    with pytest.raises(ValueError, match="rtol must be a finite number >= 0"):
        validate_pass_ir_codegen_results(dump, tensors, expected, rtol=-1)
    with pytest.raises(KeyError, match="no tensor for parameter 'b'"):
        validate_pass_ir_codegen_results(dump, {"a": tensors["a"], "out": tensors["out"]}, expected)
    with pytest.raises(KeyError, match="expected names 'y'"):
        validate_pass_ir_codegen_results(dump, tensors, {"y": expected["out"]})


def test_validate_ir_needs_the_dump(case, tmp_path):
    quiet = ir.compile(ScoreExp, output_dir=str(tmp_path / "quiet"), dump_passes=False)
    with pytest.raises(FileNotFoundError, match="compile with dump_passes=True"):
        quiet.validate_ir(*case)
