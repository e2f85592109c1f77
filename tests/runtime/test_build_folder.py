"""Build folders: `CompiledProgram.from_dir` runs a program from its artefacts alone, and the
`debug/run.py` every compile writes (JIT ones when `output_dir` is first read) re-runs it."""

import subprocess
import sys

import pytest
import torch
from add_program import AddProgram, jit_add

import plang as pl
from plang.runtime import CompiledProgram, RunConfig


def test_from_dir_runs_without_the_ir(tmp_path):
    pl.ir.compile(AddProgram, output_dir=str(tmp_path), platform="a2a3sim")
    compiled = pl.ir.CompiledProgram.from_dir(tmp_path)
    assert compiled.program is None and compiled.lowered is None
    assert compiled.param_names == ["a", "b", "c"] and compiled.platform == "a2a3sim"
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    torch.testing.assert_close(compiled(a, b), a + b)


def test_debug_run_script_replays_and_compares(tmp_path):
    pl.ir.compile(AddProgram, output_dir=str(tmp_path))
    script = tmp_path / "debug" / "run.py"
    text = script.read_text()
    assert "torch.randn((32, 64), dtype=torch.float32)" in text and "torch.zeros((32, 64)" in text
    script.write_text(text.replace('"""Called after the run with the same tensors; add assertions here."""',
                                   "torch.testing.assert_close(c, a + b); print('compared')"))
    done = subprocess.run([sys.executable, str(script), "--platform", "a5sim"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "compared" in done.stdout and "on a5sim" in done.stdout


def test_jit_writes_its_folder_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANG_PROG_BUILD_DIR", str(tmp_path))
    jit_add._cache.clear()
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    jit_add(a, b, c, config=RunConfig(disk_cache=False))
    (compiled,) = jit_add._cache.values()
    assert not any(tmp_path.iterdir())  # nothing written yet
    folder = compiled.output_dir
    assert folder.parent == tmp_path and (folder / "debug" / "run.py").is_file()
    torch.testing.assert_close(CompiledProgram.from_dir(folder)(a, b), a + b)


def test_from_dir_of_a_folder_without_metadata_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="compiled_meta.json not found"):
        CompiledProgram.from_dir(tmp_path)
    (tmp_path / "compiled_meta.json").write_text("{not json")
    with pytest.raises(ValueError, match="unreadable build metadata"):
        CompiledProgram.from_dir(tmp_path)
