"""`external_source=` kernels: relative paths resolve against the defining file, and an
external function prints with `...` as its body and round-trips."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

import plang as pl
from plang.codegen.kernel import compile_kernel
from plang.ir import assert_structural_equal

SCALE_C = """#include "plang_kernel.h"
void scale(void **args) {
  plang_memref *x = PLANG_TENSOR_ARG(args, 0), *o = PLANG_TENSOR_ARG(args, 1);
  for (int64_t i = 0; i < PLANG_SIZE(x, 2, 0); i++)
    for (int64_t j = 0; j < PLANG_SIZE(x, 2, 1); j++)
      PLANG_DATA(float, o)[i * PLANG_STRIDE(o, 2, 0) + j] =
          2.0f * PLANG_DATA(float, x)[i * PLANG_STRIDE(x, 2, 0) + j];
}
"""

_T = "pl.Tensor[[3, 5], pl.FP32]"
LONE = f"""
import plang as pl


@pl.function(type=pl.FunctionType.AIV, external_source="scale.c")
def scale(x: {_T}, out: pl.Out[{_T}]) -> {_T}:
    ...
"""
PROGRAM = f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, external_source="kernels/scale.c")
    def scale(self, x: {_T}, out: pl.Out[{_T}]) -> {_T}:
        ...  # written in C

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {_T}, out: pl.Out[{_T}]) -> {_T}:
        out = self.scale(x, out)
        return out
"""


def _import(path, monkeypatch):
    """Import the module file at `path` as a regular import would (registered by name)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    return module


def test_decorated_function_resolves_against_its_file_from_another_cwd(tmp_path, monkeypatch):
    (tmp_path / "defs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "defs" / "scale.c").write_text(SCALE_C)
    (tmp_path / "defs" / "ext_lone.py").write_text(LONE)
    monkeypatch.chdir(tmp_path / "elsewhere")
    fn = _import(tmp_path / "defs" / "ext_lone.py", monkeypatch).scale
    assert fn.attrs["external_source"] == str(tmp_path / "defs" / "scale.c")
    kernel = compile_kernel(fn)
    x, out = torch.randn(3, 5), torch.zeros(3, 5)
    kernel(x, out)
    assert torch.equal(out, 2.0 * x)


def test_program_method_resolves_against_its_file(tmp_path, monkeypatch):
    (tmp_path / "ext_prog.py").write_text(PROGRAM)
    monkeypatch.chdir("/")
    prog = _import(tmp_path / "ext_prog.py", monkeypatch).P
    assert prog.functions["scale"].attrs["external_source"] == str(tmp_path / "kernels" / "scale.c")


def test_parse_and_loads_resolve_against_a_real_filename(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    expected = str(tmp_path / "kernels" / "scale.c")
    assert pl.loads(path).functions["scale"].attrs["external_source"] == expected
    assert pl.parse(PROGRAM, filename=str(path)).functions["scale"].attrs["external_source"] == expected
    # source text without a file keeps the path as written
    assert pl.parse(PROGRAM).functions["scale"].attrs["external_source"] == "kernels/scale.c"
    assert pl.parse(PROGRAM, filename=str(tmp_path / "missing.py")).functions["scale"].attrs[
        "external_source"] == "kernels/scale.c"


@pytest.mark.parametrize("filename", [None, "prog.py"])
def test_external_function_prints_ellipsis_and_round_trips(tmp_path, filename):
    if filename:
        (tmp_path / filename).write_text(PROGRAM)
    first = pl.parse(PROGRAM, filename=str(tmp_path / filename)) if filename else pl.parse(PROGRAM)
    text = first.as_python()
    source = first.functions["scale"].attrs["external_source"]
    assert textwrap.dedent(f"""\
        @pl.function(type=pl.FunctionType.AIV, external_source={source!r})
        def scale(self, x: {_T}, out: pl.Out[{_T}]) -> {_T}:
            ...
    """) in textwrap.dedent(text.split("@pl.program\nclass P:\n", 1)[1])
    second = pl.parse(text)
    assert_structural_equal(first, second)
    assert second.functions["scale"].attrs["external_source"] == source
    assert second.as_python() == text


def test_external_source_must_be_a_path():
    with pytest.raises(pl.ParserTypeError, match="external_source= takes a file path, got 3"):
        pl.function(type=pl.FunctionType.AIV, external_source=3)


def _external(ftype: str, body: str) -> str:
    return (f"import plang as pl\n\n\n@pl.function(type=pl.FunctionType.{ftype}, external_source='k.cpp')\n"
            f"def k(x: {_T}) -> {_T}:\n    {body}\n")


@pytest.mark.parametrize("ftype, body, message, at", [
    ("AIV", "return x", "a function with external_source= must have `...` as its body", (6, 4)),  # the body
    ("InCore", "...", "external_source= is only valid on FunctionType.AIC / AIV functions", (5, 0)),  # at def
])
def test_external_source_mistakes_point_at_the_function(ftype, body, message, at):
    with pytest.raises(pl.ParserSyntaxError) as info:
        pl.parse(_external(ftype, body))
    err = info.value
    assert err.message == message
    assert (err.line, err.column) == at
    assert "^" in str(err)


CRASHING_KERNEL = r"""
#include "plang_kernel.h"
extern "C" void crash(void **args) { *(volatile int *)0 = 1; }
"""

CRASHING_PROGRAM = '''
import sys
import torch
import plang as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, external_source=sys.argv[1])
    def crash(self, x: pl.Tensor[[8, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        out = self.crash(x, out)
        return out

run = pl.compile(P, entry="main")
print("compiled", flush=True)
run(torch.zeros(8, 16), torch.zeros(8, 16))
print("survived", flush=True)
'''


def test_a_crashing_external_kernel_ends_the_process_as_documented(tmp_path):
    """The documented contract (docs/runtime.md): external C/C++ kernels run in process and
    unchecked, so a segfault in one ends the process like any C extension's."""
    (tmp_path / "crash.cpp").write_text(CRASHING_KERNEL)
    (tmp_path / "prog.py").write_text(CRASHING_PROGRAM)
    done = subprocess.run([sys.executable, str(tmp_path / "prog.py"), str(tmp_path / "crash.cpp")],
                          capture_output=True, text=True, timeout=300)
    assert "compiled" in done.stdout and "survived" not in done.stdout
    assert done.returncode in (-signal.SIGSEGV, 128 + signal.SIGSEGV), done.stderr[-2000:]
