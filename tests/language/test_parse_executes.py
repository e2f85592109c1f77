"""What `pl.parse` / `pl.loads` execute: the text's module-level Python (trusted input only),
never a DSL body: a body that calls them, or reaches plang's internals through private
attributes, is a located error and runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import plang as pl

T = "pl.Tensor[[16], pl.FP32]"


def _program(body_line: str) -> str:
    return f"""
import plang as pl


@pl.function
def f(x: {T}) -> {T}:
    y = {body_line}
    return x
"""


def test_module_level_statements_of_parsed_text_run(tmp_path: Path):
    marker = tmp_path / "ran"
    pl.parse(f"open({str(marker)!r}, 'w').write('module level')\n" + _program("x"))
    assert marker.read_text() == "module level"


@pytest.mark.parametrize("call", [
    "pl.parse({code!r})",
    "pl.loads({file!r})",
    "pl.parse.__globals__['_module_items']({code!r}, 'f', None)",
    "pl.language.decorators._module_items({code!r}, 'f', None)",
])
def test_a_dsl_body_never_executes_python_source(tmp_path: Path, call: str):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('DSL body')"
    module = tmp_path / "module.py"
    module.write_text(code + "\n")
    with pytest.raises(pl.UnsupportedConstructError) as info:
        pl.parse(_program(call.format(code=code, file=str(module))), "outer.py")
    assert str(info.value).startswith("outer.py:7:9: UnsupportedConstructError")
    assert not marker.exists()


def test_the_message_says_why():
    with pytest.raises(pl.UnsupportedConstructError, match="pl.parse executes Python source, which a DSL "
                                                          "body never does"):
        pl.parse(_program("pl.parse('x = 1')"))


def test_a_program_may_still_call_its_own_underscore_function():
    program = pl.parse(f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def _copy(self, x: {T}, out: pl.Out[{T}]) -> {T}:
        out = pl.store(pl.load(x, [0], [16]), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
        out = self._copy(x, out)
        return out
""")
    assert list(program.functions) == ["_copy", "main"]
